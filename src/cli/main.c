/* main.c: gpuimg's entry point: read, decode, run the pipeline, encode, write, report. */
#define _XOPEN_SOURCE 700
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef GPUIMG_VERSION
#define GPUIMG_VERSION "unknown"
#endif

#define SAMPLE_NAME "(built-in sample)"

/* Decodes bytes into img, timing the stage into run. */
static int decode_timed(const gpuimg_cli_t *cli, const uint8_t *bytes, size_t size,
                        const char *what, const char *stage, gpuimg_image_t *img, gpuimg_run_t *run)
{
  double t0 = gpuimg_now_ms();
  const gpuimg_codec_t *codec = gpuimg_codec_decoder(cli->plan.codec, bytes, size);
  if (codec->decode(bytes, size, what, cli->plan.max_pixels, img) < 0)
    return -1;
  gpuimg_stage_t *s = gpuimg_run_stage(run, stage, -1, 0, 1);
  if (!s)
    return -1;
  s->ms[0] = gpuimg_now_ms() - t0;
  s->codec = codec->name;
  s->bytes = size + gpuimg_image_bytes(img->width, img->height, img->channels);
  return 0;
}

/* Reads a file ("-": stdin) whole, timing the stage into run. */
static int read_timed(const char *path, const char *stage_prefix, gpuimg_buf_t *buf,
                      gpuimg_run_t *run)
{
  char name[32];
  double t0 = gpuimg_now_ms();
  if (gpuimg_file_read(path, buf) < 0)
    return -1;
  snprintf(name, sizeof name, "%sread", stage_prefix);
  gpuimg_stage_t *s = gpuimg_run_stage(run, name, -1, 0, 1);
  if (!s) {
    gpuimg_buf_free(buf);
    return -1;
  }
  s->ms[0] = gpuimg_now_ms() - t0;
  s->bytes = buf->size;
  return 0;
}

/* Reads (or takes the built-in bytes of) an image and decodes it. */
static int load_image(const gpuimg_cli_t *cli, const char *path, const unsigned char *builtin,
                      size_t builtin_size, const char *stage_prefix, gpuimg_image_t *img,
                      uint64_t *file_bytes, gpuimg_run_t *run)
{
  char name[32];
  if (!path) {
    *file_bytes = builtin_size;
    snprintf(name, sizeof name, "%sdecode", stage_prefix);
    return decode_timed(cli, builtin, builtin_size, SAMPLE_NAME, name, img, run);
  }
  gpuimg_buf_t buf;
  if (read_timed(path, stage_prefix, &buf, run) < 0)
    return -1;
  *file_bytes = buf.size;
  snprintf(name, sizeof name, "%sdecode", stage_prefix);
  int rc =
      decode_timed(cli, buf.data, buf.size, strcmp(path, "-") ? path : "<stdin>", name, img, run);
  gpuimg_buf_free(&buf);
  return rc;
}

/* Loads the mask of each step whose operation needs one as width x height, one channel (src
 * NULL: of any size, for the pipeline to check once it has decoded the image). */
static int load_masks(const gpuimg_cli_t *cli, const gpuimg_image_t *src, gpuimg_image_t *masks,
                      gpuimg_run_t *run)
{
  for (int i = 0; i < cli->plan.nsteps; i++) {
    if (!cli->plan.steps[i].op->needs_mask)
      continue;
    const char *path = gpuimg_ops_common(cli->plan.steps[i].params)->mask_path;
    const char *what = path ? path : SAMPLE_NAME;
    gpuimg_image_t m;
    uint64_t bytes;
    if (load_image(cli, path, gpuimg_sample_mask_png, gpuimg_sample_mask_png_size, "mask-", &m,
                   &bytes, run) < 0)
      return -1;
    if (src && (m.width != src->width || m.height != src->height)) {
      gpuimg_error_set(GPUIMG_EXIT_INPUT, what, "mask is %dx%d but the image is %dx%d", m.width,
                       m.height, src->width, src->height);
      gpuimg_image_free(&m);
      return -1;
    }
    /* Keep the first channel only, in place. */
    size_t n = (size_t)m.width * (size_t)m.height;
    for (size_t k = 1; k < n && m.channels > 1; k++)
      m.data[k] = m.data[k * (size_t)m.channels];
    m.channels = 1;
    masks[i] = m;
  }
  return 0;
}

int main(int argc, char **argv)
{
  gpuimg_cli_t cli;
  gpuimg_run_t run;
  gpuimg_image_t src = {0}, dst = {0}, masks[GPUIMG_MAX_STEPS];
  gpuimg_output_t out = {0}, rep = {0};
  gpuimg_buf_t encoded = {0}, input = {0};
  char *json = NULL;
  int status = GPUIMG_EXIT_OK, have_out = 0, have_rep = 0, on_device = 0, encoded_on_device = 0;
  double t_start = gpuimg_now_ms();

  if (argc > 1 && strcmp(argv[1], "compare") == 0)
    return gpuimg_compare_main(argc - 1, argv + 1);
  if (argc > 1 && strcmp(argv[1], "info") == 0)
    return gpuimg_info_main(argc - 1, argv + 1);

  memset(&run, 0, sizeof run);
  memset(masks, 0, sizeof masks);
  out.fd = rep.fd = -1;

  if (gpuimg_cli_parse(argc, argv, &cli) < 0) {
    fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
    gpuimg_cli_usage(stderr);
    gpuimg_cli_free(&cli);
    return GPUIMG_EXIT_USAGE;
  }
  if (cli.help) {
    gpuimg_cli_help(stdout);
    gpuimg_cli_free(&cli);
    return GPUIMG_EXIT_OK;
  }
  if (cli.completion) {
    gpuimg_cli_completion(stdout);
    gpuimg_cli_free(&cli);
    return GPUIMG_EXIT_OK;
  }
  gpuimg_output_install_signal_cleanup();
  if (cli.outdir && !cli.version) {
    status = gpuimg_batch_main(&cli);
    gpuimg_cli_free(&cli);
    return status;
  }
  if (cli.version) {
#ifdef GPUIMG_HAVE_CUDA
    printf("gpuimg %s (backends: cpu, cuda; ", GPUIMG_VERSION);
#else
    printf("gpuimg %s (backends: cpu; ", GPUIMG_VERSION);
#endif
    printf("png encoders: stb, fastpng%s; jpeg codecs: stb%s%s)\n",
           gpuimg_codec_have_libpng() ? ", libpng" : "",
           gpuimg_codec_have_libjpeg() ? ", libjpeg" : "",
           gpuimg_codec_have_nvjpeg() ? ", nvjpeg" : "");
    gpuimg_cli_free(&cli);
    return GPUIMG_EXIT_OK;
  }

  /* Never replace an input with an output: the image, its masks or the report. */
  const char *inputs[GPUIMG_MAX_STEPS + 1];
  int ninputs = 0;
  if (cli.input && strcmp(cli.input, "-"))
    inputs[ninputs++] = cli.input;
  for (int i = 0; i < cli.plan.nsteps; i++) {
    const char *mask = gpuimg_ops_common(cli.plan.steps[i].params)->mask_path;
    if (mask && strcmp(mask, "-"))
      inputs[ninputs++] = mask;
  }
  for (int i = 0; i < ninputs; i++) {
    const char *outs[2] = {cli.output, cli.report};
    for (int k = 0; k < 2; k++)
      if (outs[k] && strcmp(outs[k], "-") && gpuimg_same_file(inputs[i], outs[k])) {
        gpuimg_error_set(GPUIMG_EXIT_OUTPUT, outs[k], "output is the same file as the input");
        goto fail;
      }
  }
  if (cli.output && cli.report && strcmp(cli.output, "-") && strcmp(cli.report, "-") &&
      gpuimg_same_file(cli.output, cli.report)) {
    gpuimg_error_set(GPUIMG_EXIT_USAGE, cli.report, "the report and the image are the same file");
    goto fail;
  }
  /* Create the outputs' temporary files first: a bad destination fails before any work. */
  if (cli.output) {
    if (gpuimg_output_open(&out, cli.output, 1) < 0)
      goto fail;
    have_out = 1;
  }
  if (cli.report) {
    if (gpuimg_output_open(&rep, cli.report, 0) < 0)
      goto fail;
    have_rep = 1;
  }

  run.input_name = cli.input ? (strcmp(cli.input, "-") ? cli.input : "<stdin>") : SAMPLE_NAME;
  if (cli.input && gpuimg_pipeline_device_jpeg(&cli.plan)) {
    /* --codec nvjpeg on CUDA: a JPEG is decoded on the device and, to a JPEG output of 1
     * or 3 channels, encoded there; other inputs are decoded from these bytes as usual. */
    static const uint8_t soi[3] = {0xff, 0xd8, 0xff};
    if (read_timed(cli.input, "", &input, &run) < 0)
      goto fail;
    run.input_bytes = input.size;
    on_device = input.size >= 3 && memcmp(input.data, soi, 3) == 0;
    if (!on_device &&
        decode_timed(&cli, input.data, input.size, run.input_name, "decode", &src, &run) < 0)
      goto fail;
  } else if (load_image(&cli, cli.input, gpuimg_sample_png, gpuimg_sample_png_size, "", &src,
                        &run.input_bytes, &run) < 0) {
    goto fail;
  }
  if (load_masks(&cli, on_device ? NULL : &src, masks, &run) < 0)
    goto fail;
  if (on_device) {
    gpuimg_jpeg_io_t io = {
        input.data,     input.size,
        run.input_name, cli.plan.max_pixels,
        NULL,           have_out && cli.format == GPUIMG_FORMAT_JPEG ? &encoded : NULL,
        cli.plan.quality,    have_out && strcmp(cli.output, "-") ? cli.output : "<stdout>"};
    if (gpuimg_pipeline_run_jpeg(&cli.plan, &io, masks, &dst, &run) < 0)
      goto fail;
    gpuimg_buf_free(&input);
    encoded_on_device = io.out != NULL;
  } else {
    run.in_w = src.width;
    run.in_h = src.height;
    run.in_c = src.channels;
    if (gpuimg_pipeline_run(&cli.plan, &src, masks, &dst, &run) < 0)
      goto fail;
  }

  if (have_out) {
    const char *what = strcmp(cli.output, "-") ? cli.output : "<stdout>";
    double t0 = gpuimg_now_ms();
    gpuimg_stage_t *s;
    /* Encoded on the device already (the run has the output's size), or here. */
    if (!encoded_on_device) {
      const gpuimg_codec_t *codec = gpuimg_codec_encoder(cli.plan.codec, cli.format, cli.plan.png_level);
      gpuimg_encode_opts_t eo = {.quality = cli.plan.quality, .png_level = cli.plan.png_level};
      if (codec->encode(&dst, cli.format, &eo, what, &encoded) < 0)
        goto fail;
      if (!(s = gpuimg_run_stage(&run, "encode", -1, 0, 1)))
        goto fail;
      s->ms[0] = gpuimg_now_ms() - t0;
      s->codec = codec->name;
      s->bytes = gpuimg_image_bytes(dst.width, dst.height, dst.channels) + encoded.size;
      run.out_w = dst.width;
      run.out_h = dst.height;
      run.out_c = dst.channels;
      t0 = gpuimg_now_ms();
    }
    if (gpuimg_output_commit(&out, encoded.data, encoded.size) < 0)
      goto fail;
    if (!(s = gpuimg_run_stage(&run, "write", -1, 0, 1)))
      goto fail;
    s->ms[0] = gpuimg_now_ms() - t0;
    s->bytes = encoded.size;
    run.output_name = what;
    run.output_format = cli.format;
    run.output_bytes = encoded.size;
  }
  if (cli.explain)
    gpuimg_explain(stderr, &cli.plan, &run);
  if (have_rep) {
    run.total_ms = gpuimg_now_ms() - t_start;
    if (!(json = gpuimg_report_json(&cli.plan, &run)))
      goto fail;
    size_t len = strlen(json);
    json[len] = '\n'; /* cJSON's buffer ends in a NUL we can turn into a newline */
    if (gpuimg_output_commit(&rep, json, len + 1) < 0)
      goto fail;
  }
  goto done;

fail:
  status = gpuimg_error_code();
  fprintf(stderr, "gpuimg: %s\n", gpuimg_error_message());
  if (status == GPUIMG_EXIT_USAGE)
    gpuimg_cli_usage(stderr);
  if (have_out)
    gpuimg_output_abort(&out);
  if (have_rep)
    gpuimg_output_abort(&rep);
done:
  free(json);
  gpuimg_buf_free(&encoded);
  gpuimg_buf_free(&input);
  gpuimg_image_free(&src);
  gpuimg_image_free(&dst);
  for (int i = 0; i < GPUIMG_MAX_STEPS; i++)
    gpuimg_image_free(&masks[i]);
  gpuimg_run_free(&run);
  gpuimg_cli_free(&cli);
  gpuimg_codec_thread_end();
  return status;
}
