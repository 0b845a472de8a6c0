"""Prints the RoIAlign expectations of tests/ops/detection/roi_align_op_test.cc, from
torchvision.ops.roi_align (torchvision 0.14), as C++ initialisers.

Run with an interpreter that has torch and torchvision:  /usr/bin/python3 make_roi_align_expectations.py
X [2, 2, 6, 7] holds ((i * 37) % 101) * 0.125 - 6 at flat index i (exact in float32), as the
test computes it.
"""
import torch
from torchvision.ops import roi_align

N, C, H, W = 2, 2, 6, 7
x = torch.tensor([((i * 37) % 101) * 0.125 - 6 for i in range(N * C * H * W)],
                 dtype=torch.float32).reshape(N, C, H, W)
rois = torch.tensor([
    [0, 1.0, 1.0, 4.0, 3.0],
    [1, 0.5, 2.25, 6.5, 5.75],
    [0, -2.0, -1.5, 3.0, 8.0],      # partly outside the image
    [1, 5.25, 0.0, 5.5, 0.5],       # smaller than a pixel
    [0, 10.0, 2.0, 14.0, 9.0],      # scaled by 0.5, reaches past the right edge
], dtype=torch.float32)

CASES = [  # (spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned)
    (1.0, 2, 3, 2, False),
    (1.0, 2, 3, -1, False),
    (0.5, 3, 2, 0, True),
    (0.5, 2, 2, 3, True),
]

for scale, ph, pw, sr, aligned in CASES:
    y = roi_align(x, rois, output_size=(ph, pw), spatial_scale=scale, sampling_ratio=sr,
                  aligned=aligned)
    values = ", ".join("%.9g" % v for v in y.flatten().tolist())
    print("    {%s, %d, %d, %d, %d, {%s}}," % (repr(scale) + "f", ph, pw, sr, int(aligned),
                                              values))
