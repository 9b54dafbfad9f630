// SPDX-License-Identifier: GPL-2.0
/*
 * stream-flip: corrupt the perfmon2 state inside a saved migration stream
 * (QEMU's `migrate "exec:cat > FILE"`), for tests/migrate/l1-run.sh.
 *
 *   stream-flip FILE OFFSET
 *
 * Finds the last stream header (its magic, 0x4d52545332464d50 little-
 * endian: the bytes "PMF2STRM"; include/uapi/kvm_perfmon.h) in FILE and
 * inverts the byte OFFSET bytes after its start, in place. Exit 1 if
 * FILE has no stream.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC	"PMF2STRM"

int main(int argc, char **argv)
{
	unsigned char *p, *hit = NULL, *q;
	struct stat st;
	long off;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: stream-flip FILE OFFSET\n");
		return 2;
	}
	off = strtol(argv[2], NULL, 0);
	fd = open(argv[1], O_RDWR);
	if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(MAGIC)) {
		perror(argv[1]);
		return 1;
	}
	p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (q = p; (q = memmem(q, st.st_size - (q - p), MAGIC,
				 sizeof(MAGIC) - 1)); q++)
		hit = q;
	if (!hit || off < 0 || off >= st.st_size - (hit - p)) {
		fprintf(stderr, "stream-flip: no stream in %s\n", argv[1]);
		return 1;
	}
	hit[off] ^= 0xff;
	printf("stream-flip: byte %ld of the stream at file offset %ld "
	       "inverted\n", off, (long)(hit - p));
	munmap(p, st.st_size);
	close(fd);
	return 0;
}
