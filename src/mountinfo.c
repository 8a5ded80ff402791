#include <string.h>

#include "src/mountinfo.h"

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
