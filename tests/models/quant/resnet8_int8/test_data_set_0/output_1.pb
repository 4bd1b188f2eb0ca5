
B/fc/Gemm_output_0/qJ
Gq‹M;tv5þ