/*
 * fuzz_config.c — tesseld's INI configuration (daemon/config.c): the file is
 * written to a memfd and loaded by path, as --config does, then cross-checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tsl_config_t c;
    static int fd = -1;
    if (fd < 0)
        fd = memfd_create("tsl-fuzz-config", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    tsl_err_t err = {0};
    tsl_config_defaults(&c);
    if (tsl_config_load_file(&c, path, &err) == 0) {
        tsl_config_validate(&c, &err);
        tsl_config_token_role(&c, "fuzz-token");
    }
    return 0;
}
