// The GPU driver's teardown of a finished command taken off its wall time.
// When a CUDA process ends, the driver frees its contexts as the process's
// /dev/nvidia* files are closed: about a tenth of a second per GPU on the
// H100 hosts, which the shell waits for although every output is in place.
// A helper process, forked before CUDA starts (while the process is small),
// waits on one end of a socket; when the command's outputs are committed it
// is sent the GPU files (SCM_RIGHTS) and the command ends at once. The last
// reference to those files is then the helper's, which closes them, so the
// driver's teardown runs there, after the command has returned.
//
// ALIGNSCOPE_TEARDOWN_HELPER=0 in the environment turns it off (the driver
// then tears down in the command's own exit, as without it).
#pragma once

namespace alignscope::cli {

// Forks the helper (once; a no-op when turned off, outside Linux, or when the
// fork fails). Call before the GPU's driver starts.
void start_gpu_teardown_helper();

// Sends every open /dev/nvidia* file of this process to the helper; true when
// they went. Call only once nothing is left but the process's end (outputs
// committed, no GPU work in flight), right before _Exit.
bool hand_gpu_teardown_to_helper();

}  // namespace alignscope::cli
