# numpyro's NUTS on the posterior of bench_multilevel.cpp, on the data it
# writes (--write-data DIR): the same model and priors in the same
# non-centred parameterisation (rstanarm's decov for a 2 x 2 covariance),
# float64, data on the GPU, chains vectorised. Prints the minimum bulk ESS
# (split chains, Geyer's initial monotone sequence: numpyro's estimator on
# chains cut in halves, as bench_mcmc.hpp's ess()) over alpha and beta, b
# and Sigma, the wall time with compilation and warmup included, and ES/s.
#
#   python3 anchors_numpyro_multilevel.py --data DIR --n 1000000 --k 20 --groups 10000 \
#       [--chains 16] [--warmup 1000] [--samples 1000]
import argparse
import time

import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
import numpyro  # noqa: E402
import numpyro.distributions as dist  # noqa: E402
from numpyro.diagnostics import effective_sample_size  # noqa: E402
from numpyro.infer import MCMC, NUTS  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--data", required=True)
p.add_argument("--n", type=int, required=True)
p.add_argument("--k", type=int, required=True)
p.add_argument("--groups", type=int, required=True)
p.add_argument("--chains", type=int, default=16)
p.add_argument("--warmup", type=int, default=1000)
p.add_argument("--samples", type=int, default=1000)
a = p.parse_args()

x = np.fromfile(f"{a.data}/x.bin", dtype=np.float64).reshape(a.k, a.n).T
y = np.fromfile(f"{a.data}/y.bin", dtype=np.float64)
g = np.fromfile(f"{a.data}/g.bin", dtype=np.int32)
scales = 2.5 / x.std(axis=0, ddof=1)
x, y, g, scales = (jnp.asarray(v) for v in (x, y, g, scales))
G = a.groups


def factor(tau, zeta, rho):
    """T (2 x 2 lower) of decov: trace 2 tau^2, shares zeta / sum(zeta), r = 2 rho - 1."""
    sd = jnp.sqrt(zeta / zeta.sum(-1, keepdims=True) * 2 * tau[..., None] ** 2)
    r = 2 * rho - 1
    return sd[..., 0], sd[..., 1] * r, sd[..., 1] * jnp.sqrt(1 - r * r)


def model(x, y, g):
    alpha = numpyro.sample("alpha", dist.Normal(0.0, 2.5))
    beta = numpyro.sample("beta", dist.Normal(jnp.zeros(a.k), scales))
    z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([G, 2]))
    tau = numpyro.sample("tau", dist.Gamma(1.0, 1.0))
    zeta = numpyro.sample("zeta", dist.Gamma(1.0, 1.0).expand([2]))
    rho = numpyro.sample("rho", dist.Beta(1.0, 1.0))
    t00, t10, t11 = factor(tau, zeta, rho)
    b0 = t00 * z[:, 0]
    b1 = t10 * z[:, 0] + t11 * z[:, 1]
    eta = alpha + x @ beta + b0[g] + b1[g] * x[:, 0]
    numpyro.sample("y", dist.Bernoulli(logits=eta), obs=y)


mcmc = MCMC(NUTS(model), num_warmup=a.warmup, num_samples=a.samples, num_chains=a.chains,
            chain_method="vectorized", progress_bar=False)
t0 = time.time()
mcmc.run(jax.random.PRNGKey(1), x, y, g)
s = mcmc.get_samples(group_by_chain=True)
jax.block_until_ready(s["alpha"])
wall = time.time() - t0


def split_ess(v):
    """Bulk ESS of each variable: chains x draws x ... with each chain cut in two."""
    v = np.asarray(v)
    half = v.shape[1] // 2
    v = np.concatenate([v[:, :half], v[:, v.shape[1] - half:]], axis=0)
    return np.asarray(effective_sample_size(v)).ravel()


t00, t10, t11 = factor(s["tau"], s["zeta"], s["rho"])
b0 = t00[..., None] * s["z"][..., 0]
b1 = t10[..., None] * s["z"][..., 0] + t11[..., None] * s["z"][..., 1]
sigma = jnp.stack([t00 * t00, t10 * t00, t10 * t10 + t11 * t11], axis=-1)
ess_fixed = min(split_ess(s["alpha"]).min(), split_ess(s["beta"]).min())
ess_b = min(split_ess(b0).min(), split_ess(b1).min())
ess_sigma = split_ess(sigma).min()
ess = min(ess_fixed, ess_b, ess_sigma)
extra = mcmc.get_extra_fields(group_by_chain=True)
div = int(np.asarray(extra["diverging"]).sum())
print(f"numpyro {numpyro.__version__}, jax {jax.__version__}, {jax.devices()[0]}")
print("| chains | min ESS (fixed / b / Sigma) | total s | min ES/s (total) | divergent "
      "| Sigma means |")
print("|---|---|---|---|---|---|")
print(f"| {a.chains} | {ess_fixed:.0f} / {ess_b:.0f} / {ess_sigma:.0f} | {wall:.1f} "
      f"| {ess / wall:.2f} | {div} | "
      + " ".join(f"{float(m):.3f}" for m in np.asarray(sigma).mean(axis=(0, 1))) + " |")
