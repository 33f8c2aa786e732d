"""Issue 15's batched GLM likelihood written in PyTorch on the same GPU, to
run in the same device call as bench_glm --points so that the ratios are
side by side.

    python3 bench/anchors_torch_glm.py [P ...]   (default 1 64 256 1024)

bernoulli_logit at n = 10^6, k = 100, float64, data resident: for P
points (alpha of length P, beta k x P) the P log-likelihoods and their
gradients by alpha and beta, in closed form, the way a PyTorch user writes
them:
    eta = alpha + x beta;  lp = colSums(y eta - softplus(eta))
    r = y - sigmoid(eta);  d alpha = colSums(r);  d beta = x' r
CUDA events, median of the repetitions after one warm-up. Prints one
markdown table.
"""
import sys

import torch
import torch.nn.functional as F

from anchors_torch import timed  # this folder is on the path when run as a script


def main():
    points = [int(s) for s in sys.argv[1:]] or [1, 64, 256, 1024]
    n, k = 1_000_000, 100
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(15)
    x = torch.randn(n, k, dtype=torch.float64, device=dev, generator=g)
    y = (torch.rand(n, dtype=torch.float64, device=dev, generator=g) < 0.5).double()
    print(f"device: {torch.cuda.get_device_name(dev)}, torch {torch.__version__}")
    print(f"bernoulli_logit lp + gradient, n = {n}, k = {k}, float64, data resident")
    print()
    print("| P | lp + gradient (ms) | ms per point |")
    print("|---|---|---|")
    yc = y[:, None]
    for p in points:
        beta = 0.1 * torch.randn(k, p, dtype=torch.float64, device=dev, generator=g)
        alpha = torch.zeros(p, dtype=torch.float64, device=dev)
        out = {}

        def lp_grad():
            eta = torch.addmm(alpha, x, beta)
            out["lp"] = (yc * eta - F.softplus(eta)).sum(0)
            r = yc - torch.sigmoid(eta)
            out["d_alpha"] = r.sum(0)
            out["d_beta"] = x.T @ r

        t = timed(lp_grad, 9 if p <= 256 else 5)
        print(f"| {p} | {t:.3f} | {t / p:.4f} |")
        del out


if __name__ == "__main__":
    main()
