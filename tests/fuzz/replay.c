/*
 * Replays a corpus through LLVMFuzzerTestOneInput without libFuzzer, so the
 * test suite runs every seed under gcc and each sanitizer configuration.
 * Arguments: files or directories. Fails when it found nothing to replay.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long replayed;

static void
replay_file(const char *path)
{
	uint8_t *buf;
	FILE *f = fopen(path, "rb");
	long n;

	if (f == NULL) {
		perror(path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf == NULL || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
		fprintf(stderr, "%s: cannot read\n", path);
		exit(2);
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	replayed++;
}

static void
replay(const char *path)
{
	char sub[4096];
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (stat(path, &st) != 0) {
		perror(path);
		exit(2);
	}
	if (!S_ISDIR(st.st_mode)) {
		replay_file(path);
		return;
	}
	d = opendir(path);
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		replay(sub);
	}
	if (d != NULL)
		closedir(d);
}

int
main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		replay(argv[i]);
	printf("replayed %ld inputs\n", replayed);
	return replayed > 0 ? 0 : 1;
}
