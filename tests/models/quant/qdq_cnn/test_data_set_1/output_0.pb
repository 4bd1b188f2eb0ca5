
Bm3_qJ
›k®oÂÿw@G