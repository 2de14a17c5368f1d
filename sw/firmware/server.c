/* The inference server (datasheet usage model) on the MCORE.
 *
 * The host port gateware executes the transport itself (status, reads, DMA of
 * written data into the model/tensor/server windows, every protocol error) and
 * posts each completed command to this loop through the message queue, read
 * with the programmer guide's ztamMsgq API.  The server checks what was
 * written, runs inferences, fills RSpec / RTensor / RTimings and clears the
 * busy bits. */
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "accel.h"
#include "boot.h"
#include "crc32.h"
#include "host_port.h"
#include "host_protocol.h"
#include "model_image.h"
#include "model_run.h"
#include "platform.h"
#include "server.h"
#include "server_image.h"
#include "tensorsoc_config.h"
#include "ztam.h"

/* The loaded model, valid once its image passed the checks. */
static struct {
	int valid;
	uint32_t input_bytes, output_bytes, n_layers;
} model;

/* Per-layer times of the last inference, microseconds (RTimings). */
#define MAX_LAYERS MODEL_MAX_LAYERS   /* spec/model_image.py: the compiler refuses more */
static uint32_t timings_us[MAX_LAYERS];
/* Where each layer of the last inference ran, and its exact cycles. */
static model_layer_t layers[MAX_LAYERS];
static uint32_t tensor_valid_len;     /* bytes of a complete WTensor / frame, 0: none */

static void publish_spec(void)
{
	uint8_t spec[16];
	memset(spec, 0, sizeof spec);
	spec[HOST_RSPEC_HW_TYPE] = HOST_HW_TYPE_TENSORSOC;
	/* Tiles, each tile's internal memory and the external memory: spec/config.py rspec(). */
	spec[HOST_RSPEC_TILES] = TSOC_RSPEC_TILES;
	spec[HOST_RSPEC_INTERNAL_KIB] = TSOC_RSPEC_INTERNAL_KIB & 0xff;
	spec[HOST_RSPEC_INTERNAL_KIB + 1] = TSOC_RSPEC_INTERNAL_KIB >> 8;
	spec[HOST_RSPEC_EXTERNAL_KIB] = TSOC_RSPEC_EXTERNAL_KIB & 0xff;
	spec[HOST_RSPEC_EXTERNAL_KIB + 1] = TSOC_RSPEC_EXTERNAL_KIB >> 8;
	uint32_t in = model.valid ? model.input_bytes : 0, out = model.valid ? model.output_bytes : 0;
	for (int i = 0; i < 4; i++) {
		spec[HOST_RSPEC_INPUT_BYTES + i] = in >> (8 * i);
		spec[HOST_RSPEC_OUTPUT_BYTES + i] = out >> (8 * i);
	}
	host_port_set_spec(spec);
	host_port_set_input_len(in);
}

static void model_written(uint32_t length)
{
	const volatile uint32_t *hdr = (const volatile uint32_t *)MODEL_WINDOW_BASE;
	uint32_t payload = hdr[MODEL_IMAGE_W_PAYLOAD_LENGTH];
	model.valid = 0;
	tensor_valid_len = 0;
	if (length < MODEL_IMAGE_HEADER_SIZE || hdr[MODEL_IMAGE_W_MAGIC] != MODEL_IMAGE_MAGIC) {
		printf("server: model rejected: bad magic\n");
	} else if (hdr[MODEL_IMAGE_W_VERSION] != MODEL_IMAGE_VERSION) {
		printf("server: model rejected: format version %lu, expected %d\n",
		       (unsigned long)hdr[MODEL_IMAGE_W_VERSION], MODEL_IMAGE_VERSION);
	} else if (payload != length - MODEL_IMAGE_HEADER_SIZE) {
		printf("server: model rejected: header says %lu payload bytes, %lu written\n",
		       (unsigned long)payload, (unsigned long)(length - MODEL_IMAGE_HEADER_SIZE));
	} else if (crc32((const volatile uint8_t *)hdr + MODEL_IMAGE_HEADER_SIZE, payload) != hdr[MODEL_IMAGE_W_CRC32]) {
		printf("server: model rejected: CRC mismatch\n");
	} else if (hdr[MODEL_IMAGE_W_N_LAYERS] > MAX_LAYERS ||
		   hdr[MODEL_IMAGE_W_INPUT_BYTES] > TENSOR_WINDOW_SIZE) {
		printf("server: model rejected: %lu layers / %lu input bytes exceed this device\n",
		       (unsigned long)hdr[MODEL_IMAGE_W_N_LAYERS], (unsigned long)hdr[MODEL_IMAGE_W_INPUT_BYTES]);
	} else if (model_validate(hdr) != 0) {
		/* (model_validate said why) */
	} else {
		model.valid = 1;
		model.input_bytes = hdr[MODEL_IMAGE_W_INPUT_BYTES];
		model.output_bytes = hdr[MODEL_IMAGE_W_OUTPUT_BYTES];
		model.n_layers = hdr[MODEL_IMAGE_W_N_LAYERS];
		printf("server: model loaded: %lu bytes, %lu layers, input %lu bytes, output %lu bytes\n",
		       (unsigned long)length, (unsigned long)model.n_layers,
		       (unsigned long)model.input_bytes, (unsigned long)model.output_bytes);
	}
	publish_spec();
	host_port_finish(HOST_STATUS_BUSY_WRITE, model.valid ? 0 : HOST_ERR_BAD_MODEL);
}

static void server_written(uint32_t length)
{
	uint32_t payload;
	const char *why = server_image_check(&payload);
	if (!why && payload != length - SERVER_IMAGE_HEADER_SIZE)
		why = "header length differs from the bytes written";
	if (why) {
		printf("server: uploaded server rejected (%lu bytes): %s\n", (unsigned long)length, why);
		host_port_finish(HOST_STATUS_BUSY_WRITE, HOST_ERR_BAD_SERVER);
		return;
	}
	printf("server: starting the uploaded server (%lu bytes)\n", (unsigned long)payload);
	host_port_finish(HOST_STATUS_BUSY_WRITE, 0);
	server_image_run();
}

static void tensor_written(uint32_t length)
{
	/* The gateware checked the length against the model's input size. */
	tensor_valid_len = model.valid ? length : 0;
	host_port_finish(HOST_STATUS_BUSY_WRITE, model.valid ? 0 : HOST_ERR_NO_MODEL);
}

static void run_inference(void)
{
	uint32_t cause = 0;
	if (!model.valid) {
		cause = HOST_ERR_NO_MODEL;
	} else if (tensor_valid_len != model.input_bytes) {
		printf("server: inference refused: input tensor has %lu bytes, the model needs %lu\n",
		       (unsigned long)tensor_valid_len, (unsigned long)model.input_bytes);
		cause = HOST_ERR_BAD_LENGTH;
	} else {
		/* Each compute op on the accelerator when the image has its
		 * program (accel.c), otherwise in plain C on the MCORE. */
		const volatile uint32_t *image = (const volatile uint32_t *)MODEL_WINDOW_BASE;
		memset(layers, 0, sizeof layers);
		uint64_t t0 = cycles_now();
		int accelerated = model_execute(image, timings_us, layers, MAX_LAYERS);
		uint64_t cycles = cycles_now() - t0;
		if (accelerated < 0) {
			cause = HOST_ERR_BAD_MODEL;
		} else {
			host_port_set_rtensor(model_output(image), model.output_bytes);
			host_port_set_rtimings(timings_us, 4 * model.n_layers);
			/* Per layer, where it ran (the firmware decides: accel.c) and
			 * its cycles; printed after the inference, outside its timing.
			 * verification/soc/model_job.py parses these lines. */
			for (uint32_t l = 0; l < model.n_layers; l++) {
				static const char *const names[] = {"CONV", "LIN", "MAXPOOL"};
				const model_layer_t *r = &layers[l];
				uint32_t k = r->opcode - MODEL_OPCODE_CONV;
				if (r->why == ACCEL_RAN)
					printf("server: layer %lu op %u %s on the accelerator, %lu cycles\n", (unsigned long)l,
					       r->op, k < 3 ? names[k] : "?", (unsigned long)r->cycles);
				else
					printf("server: layer %lu op %u %s in software, %lu cycles (%s)\n", (unsigned long)l,
					       r->op, k < 3 ? names[k] : "?", (unsigned long)r->cycles, accel_why(r->why));
			}
			printf("server: inference done in %lu cycles (%d of %lu layers on the accelerator)\n",
			       (unsigned long)cycles, accelerated, (unsigned long)model.n_layers);
		}
	}
	host_port_finish(HOST_STATUS_WAIT_INFERENCE, cause);
}

static void frame_acquired(uint32_t length)
{
	/* The frame is the input tensor; the host may also read it raw. */
	tensor_valid_len = length;
	ztamMsgqWritePointer((void *)TENSOR_WINDOW_BASE);
	ztamMsgqWriteInt((int)length);
	host_port_finish(HOST_STATUS_WAIT_ACQUIRE, model.valid && length != model.input_bytes ? HOST_ERR_SENSOR : 0);
}

void server_run(void)
{
	publish_spec();
	host_port_set_rtimings(timings_us, 0);
	printf("server: ready (%s host port)\n", host_port_qpi() ? "QPI" : "SPI");
	for (;;) {
		uint32_t code = (uint32_t)ztamMsgqReadInt();
		uint32_t length = (uint32_t)ztamMsgqReadInt();
		/* The host port wrote main RAM behind the data cache's back. */
		dcache_flush();
		switch (code) {
		case HOST_MSG_MODEL_DONE: model_written(length); break;
		case HOST_MSG_SERVER_DONE: server_written(length); break;
		case HOST_MSG_TENSOR_DONE: tensor_written(length); break;
		case HOST_MSG_INFERENCE: run_inference(); break;
		case HOST_MSG_ACQUIRE_DONE: frame_acquired(length); break;
		default:
			printf("server: unknown message %lu\n", (unsigned long)code);
			break;
		}
	}
}
