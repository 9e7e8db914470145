/* streams.h: the standard streams a process was started without. */
#ifndef GPUIMG_STREAMS_H
#define GPUIMG_STREAMS_H

/* Puts /dev/null in the place of each closed standard stream (fd 0, 1, 2) and remembers
 * which were closed. Call first thing in main(), before any file is opened. */
void gpuimg_streams_guard(void);

/* 1 when standard stream fd (0, 1 or 2) was closed at start-up. */
int gpuimg_stream_closed(int fd);

#endif
