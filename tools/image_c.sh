#!/bin/sh
# image_c.sh BINARY OUT.c: BINARY as the C array image_bytes.
set -eu
{
	printf '#include "src/client/image.h"\n\nCONFINE_HIDDEN const unsigned char image_bytes[] = {\n'
	od -An -v -tx1 "$1" | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'
	printf '};\nCONFINE_HIDDEN const size_t image_len = sizeof(image_bytes);\n'
} >"$2"
