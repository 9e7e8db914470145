/* streams.c: the standard streams a process was started without (`gpuimg ... <&-`): /dev/null
 * takes their place, so that no file gpuimg opens becomes fd 0, 1 or 2, and reading stdin or
 * writing stdout then fails with a clear message instead of using that file. */
#include "streams.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

static int closed[3];

void gpuimg_streams_guard(void)
{
  for (int fd = 0; fd < 3; fd++) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
      continue;
    /* The lowest free descriptor: fd itself, as the lower ones are open by now. */
    int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    closed[fd] = 1;
    if (got >= 0 && got != fd) {
      (void)dup2(got, fd);
      (void)close(got);
    }
  }
}

int gpuimg_stream_closed(int fd)
{
  return fd >= 0 && fd < 3 && closed[fd];
}
