# DeTail-style mix for the first seed's background traffic (Zats et al., "DeTail: reducing the
# flow completion time tail in datacenter networks", SIGCOMM 2012, cited there as [13]).
# DeTail's evaluation reports its query traffic as partition-aggregate responses of 2 KB, 8 KB
# and 32 KB; the seed says only that the model "combines small and large flows". The equal
# weights of the three short sizes and the 1 MB long flows that make up 10% of flows are
# dcnsim's choice, not numbers from either paper: replace this file with your own CDF if you
# have the original mix.
# Columns: flow size in bytes, cumulative probability (0..1). A vertical step (the same size
# twice) is a point mass; interpolate linearly between points.
2048 0
2048 0.3
8192 0.3
8192 0.6
32768 0.6
32768 0.9
1000000 0.9
1000000 1.0
