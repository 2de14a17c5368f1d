/* Pieces every accelerated layer program uses (sw/model/accel.py).
 *
 * MCORE source: C functions whose tensor statements ('>' lines, the MCORE
 * programmer guide's syntax) are the program.  Every address and size of a
 * model is known when it is compiled, so sw/model/accel.py compiles a
 * function's statements with tensorsoc.sw.mcore.api.instructions, its parameters given
 * as defines (NP, NT, VW come from the configuration), and the firmware only
 * streams the instruction words into the TensorEngine queue.  The process
 * space of an instruction is that of the MCORE task issuing it (guide 10):
 * accel.py gives it per call.  Like any MCORE source, each function also
 * preprocesses (`tsoc mcore compile`) into C for the ztam runtime
 * (tests/test_model_programs.py).
 */
#include <stdint.h>

void layer_done(int parm);

/* A contiguous block of N elements from DDR to the TensorEngine scratch-pad
 * (an input whose windows overlap, or the arranged shared-memory image sent
 * to more than one PCORE / process space): one read, then every use reads
 * the scratch-pad at a vector word per clock. */
void stage(uint32_t AT, uint32_t SRC, int N)
{
	> SCRATCH(AT)[0:N-1] <= DDR(SRC)[0:N-1];
}

/* The program's end: the firmware waits for this CALLBACK (its tag is the
 * layer's number, allocated at compile time). */
void done(void)
{
	> CALLBACK(layer_done, 0);
}
