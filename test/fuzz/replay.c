/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs a fuzz target's input files once each, without libFuzzer, so that "make check"
 * (and its AddressSanitizer build) replays the committed corpus, including the inputs that
 * once crashed: test/fuzz/corpus/FUZZ_CORPUS/ under $top_srcdir, or the files given.
 * Exits 0 when every input ran, 77 when the corpus is not found, 1 on a file it cannot read.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(1 << 16);
	size_t n;

	if (!f || !buf) {
		perror(path);
		free(buf);
		if (f)
			fclose(f);
		return 1;
	}
	n = fread(buf, 1, 1 << 16, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	const char *top = getenv("top_srcdir");
	char dir[4096], path[8192];
	struct dirent *e;
	int ran = 0, bad = 0;
	DIR *d;

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			bad |= run_file(argv[i]);
		return bad;
	}
	snprintf(dir, sizeof(dir), "%s/test/fuzz/corpus/%s", top ? top : ".", FUZZ_CORPUS);
	d = opendir(dir);
	if (!d) {
		printf("%s: not found: skipping\n", dir);
		return 77;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		bad |= run_file(path);
		ran++;
	}
	closedir(d);
	printf("%s: %d inputs replayed\n", dir, ran);
	return bad || !ran;
}
