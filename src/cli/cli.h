/* cli.h: the gpuimg command: parsing its command line and its subcommands' entry points. */
#ifndef GPUIMG_CLI_H
#define GPUIMG_CLI_H

#include "pipeline.h"

/* Parses argv; -1 with a usage error (exit 2) set. */
int gpuimg_cli_parse(int argc, char **argv, gpuimg_cli_t *cli);
void gpuimg_cli_help(FILE *f);
void gpuimg_cli_free(gpuimg_cli_t *cli);

/* Batch mode: converts every input into cli->outdir; returns the exit status. */
int gpuimg_batch_main(const gpuimg_cli_t *cli);
void gpuimg_cli_usage(FILE *f);

/* Subcommands with their own command lines (argv[0] is the subcommand's name). */
int gpuimg_compare_main(int argc, char **argv);
int gpuimg_info_main(int argc, char **argv);

#endif
