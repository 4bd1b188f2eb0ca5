
B/fc/Gemm_output_0/qJ
Gs‹L;sw6ý