#!/bin/sh
# image_c.sh BINARY OUT.c: BINARY as the C array confine_helper_image.
set -eu
{
	printf '#include "src/image.h"\n\nCONFINE_HIDDEN const unsigned char confine_helper_image[] = {\n'
	od -An -v -tx1 "$1" | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'
	printf '};\nCONFINE_HIDDEN const size_t confine_helper_image_len = sizeof(confine_helper_image);\n'
} >"$2"
