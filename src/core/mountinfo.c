#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/core/mountinfo.h"

void
mountinfo_unescape(char *s)
{
	char *d = s;

	for (; *s != '\0'; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
			    (s[3] - '0'));
			s += 3;
		} else {
			*d = *s;
		}
	}
	*d = '\0';
}

size_t
mountinfo_covers(const char *point, const char *path)
{
	size_t n = strlen(point);

	if (strcmp(point, "/") == 0)
		return 1;
	return strncmp(point, path, n) == 0 &&
	    (path[n] == '/' || path[n] == '\0') ? n : 0;
}

int
mountinfo_each(int (*fn)(const struct mountinfo_entry *, void *), void *arg)
{
	char *line = NULL, *p, *sep, *f[6];
	struct mountinfo_entry e;
	size_t cap = 0;
	FILE *mi = fopen("/proc/self/mountinfo", "re");
	int i, rc = 0;

	if (mi == NULL)
		return -errno;
	while (rc == 0 && getline(&line, &cap, mi) > 0) {
		/* id parent major:minor root point opts [tags] - type source super */
		line[strcspn(line, "\n")] = '\0';
		if ((sep = strstr(line, " - ")) == NULL) {
			rc = -EIO;
			break;
		}
		*sep = '\0';
		p = line;
		for (i = 0; i < 6 && (f[i] = strsep(&p, " ")) != NULL; i++)
			;
		p = sep + 3;
		e.type = strsep(&p, " ");
		e.source = strsep(&p, " ");
		e.super = p;
		if (i < 6 || e.type == NULL || e.source == NULL || e.super == NULL) {
			rc = -EIO;
			break;
		}
		mountinfo_unescape(f[3]);
		mountinfo_unescape(f[4]);
		e.root = f[3];
		e.point = f[4];
		e.opts = f[5];
		rc = fn(&e, arg);
	}
	if (rc == 0 && ferror(mi))
		rc = -EIO;
	free(line);
	fclose(mi);
	return rc;
}

bool
mountinfo_lists(const char *list, const char *name)
{
	size_t n = strlen(name), k;

	for (; *list != '\0'; list += k + (list[k] == ',')) {
		k = strcspn(list, ",");
		if (k == n && strncmp(list, name, n) == 0)
			return true;
	}
	return false;
}
