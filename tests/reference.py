"""Plain-numpy twins of every kernel update rule, written from docs/algorithms.md.

They operate on dense copies of one example at a time, so they are slow and obviously
correct; the kernel tests check that the numba kernels agree with them to 1e-12. Where the
kernels keep a different representation (the full-covariance kernels keep the Cholesky factor of
the precision, SGD keeps scaled weights), the twins use the papers' plain one (``Sigma`` itself,
explicit weight decay), so the tests also check that the representations agree.

The numerical guards of the kernels (a floor on variances, a cap on the full-covariance
precision increment, no update for a document whose margin variance or squared norm is below
the smallest normal double or whose step is not finite) are repeated here in their plain form;
on the well-conditioned data of the agreement tests they never fire.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtri

SMALLEST_NORMAL = np.finfo(float).tiny  # the kernels' constants.SMALLEST_NORMAL
PERCEPTRON, PA, PA1, PA2 = "perceptron", "pa", "pa1", "pa2"
VAR, STDEV, AROW, AROW_HINGE, SCW1, SCW2 = "var", "stdev", "arow", "arow-hinge", "scw1", "scw2"


def dense_row(X, i):
    return np.asarray(X[i].todense()).ravel()


def competitor(scores, y):
    masked = np.where(np.arange(len(scores)) == y, -np.inf, scores)
    return int(np.argmax(masked))  # argmax returns the first (lowest) index on ties


# --------------------------------------------------------------------------- first order
def pa_tau(rule, m, q, C):
    if rule == PERCEPTRON:
        return 1.0 if m <= 0 else 0.0
    loss = max(0.0, 1.0 - m)
    if loss == 0.0 or q == 0.0 or (rule == PA and q < SMALLEST_NORMAL):
        return 0.0
    with np.errstate(over="ignore", divide="ignore"):
        tau = {PA: loss / q, PA1: min(C, loss / q), PA2: loss / (q + 1.0 / (2.0 * C))}[rule]
    return tau if np.isfinite(tau) else 0.0


def weighted_pa_tau(rule, m, q, C, s):
    """The step for an example of weight ``s`` (docs/algorithms.md "Weighted examples"): the
    perceptron's step ``s``; PA-I/PA-II's slack penalty ``s C`` (JMLR 2006 eqs. 4, 5, C -> sC)."""
    if rule == PERCEPTRON:
        return s * pa_tau(rule, m, q, C)
    return pa_tau(rule, m, q, s * C)


def first_order_binary(X, y, order, w, rule, C=1.0, weights=None):
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        m = y[i] * (w @ x)
        mistakes += m <= 0
        tau = weighted_pa_tau(rule, m, x @ x, C, 1.0 if weights is None else weights[i])
        if tau > 0 and np.any(x):
            updates += 1
            w += tau * y[i] * x
    return mistakes, updates


def first_order_multiclass(X, y, order, W, rule, C=1.0, weights=None):
    """``W`` is (d, K); top-1 update on the difference vector, ``||g||^2 = 2 ||x||^2``."""
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        scores = x @ W
        r = competitor(scores, y[i])
        m = scores[y[i]] - scores[r]
        mistakes += m <= 0
        tau = weighted_pa_tau(rule, m, 2 * (x @ x), C, 1.0 if weights is None else weights[i])
        if tau > 0 and np.any(x):
            updates += 1
            W[:, y[i]] += tau * x
            W[:, r] -= tau * x
    return mistakes, updates


# --------------------------------------------------------------------------- averaged perceptron
def averaged_perceptron_binary(X, y, order, history):
    """``history`` is a list holding the weight vector after every example seen so far (the
    first entry is the starting vector, excluded from the average); returns the counts and
    the average of the vectors after each example."""
    mistakes = updates = 0
    w = history[-1].copy()
    for i in order:
        x = dense_row(X, i)
        if y[i] * (w @ x) <= 0:
            mistakes += 1
            if np.any(x):
                updates += 1
                w = w + y[i] * x
        history.append(w.copy())
    return (mistakes, updates), np.mean(history[1:], axis=0)


def averaged_perceptron_multiclass(X, y, order, history):
    mistakes = updates = 0
    W = history[-1].copy()
    for i in order:
        x = dense_row(X, i)
        scores = x @ W
        r = competitor(scores, y[i])
        if scores[y[i]] - scores[r] <= 0:
            mistakes += 1
            if np.any(x):
                updates += 1
                W = W.copy()
                W[:, y[i]] += x
                W[:, r] -= x
        history.append(W.copy())
    return (mistakes, updates), np.mean(history[1:], axis=0)


# --------------------------------------------------------------------------- SGD
def sgd_slope(loss, m):
    """``-dloss/dm``."""
    if loss == "hinge":
        return 1.0 if m < 1 else 0.0
    if loss in ("log_loss", "log"):  # scikit-learn's name, and textcw's deprecated alias of it
        return 1.0 / (1.0 + np.exp(m)) if m <= 0 else np.exp(-m) / (1.0 + np.exp(-m))
    if m >= 1:
        return 0.0
    return 2.0 * (1.0 - m) if m >= -1 else 4.0


def sgd_rate(schedule, t, alpha, eta0, power_t):
    return {"decay": eta0 / (1 + eta0 * alpha * t), "constant": eta0,
            "invscaling": eta0 / t**power_t}[schedule]


def sgd_binary(X, y, order, w, count, loss, schedule, alpha, eta0, power_t, weights=None):
    """Explicit decay of every weight, then the gradient step (with the margin before both); an
    example of weight ``s`` takes the gradient of ``s loss``: ``s`` times the step."""
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        count[0] += 1
        eta = sgd_rate(schedule, count[0], alpha, eta0, power_t)
        m = y[i] * (w @ x)
        mistakes += m <= 0
        g = sgd_slope(loss, m)
        w *= 1 - eta * alpha
        if g > 0 and np.any(x):
            updates += 1
            w += eta * g * (1.0 if weights is None else weights[i]) * y[i] * x
    return mistakes, updates


def sgd_multiclass(X, y, order, W, count, loss, schedule, alpha, eta0, power_t, weights=None):
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        count[0] += 1
        eta = sgd_rate(schedule, count[0], alpha, eta0, power_t)
        scores = x @ W
        r = competitor(scores, y[i])
        m = scores[y[i]] - scores[r]
        mistakes += m <= 0
        g = sgd_slope(loss, m)
        W *= 1 - eta * alpha
        if g > 0 and np.any(x):
            updates += 1
            g *= 1.0 if weights is None else weights[i]
            W[:, y[i]] += eta * g * x
            W[:, r] -= eta * g * x
    return mistakes, updates


# --------------------------------------------------------------------------- second-order perceptron
def sop_binary(X, y, order, vsum, A, full):
    """``A`` is the full correlation matrix or its diagonal; returns counts, updates in place."""
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        if full:
            score = vsum @ np.linalg.solve(A + np.outer(x, x), x)
        else:
            score = np.sum(vsum * x / (A + x * x))
        if y[i] * score <= 0:
            mistakes += 1
            if np.any(x):
                updates += 1
                vsum += y[i] * x
                A += np.outer(x, x) if full else x * x
    return mistakes, updates


def sop_multiclass(X, y, order, vsum, A, full):
    """``vsum`` is (d, K); ``A`` is (K, d, d) (full) or (d, K) (diag)."""
    mistakes = updates = 0
    K = vsum.shape[1]
    for i in order:
        x = dense_row(X, i)
        if full:
            scores = np.array([vsum[:, k] @ np.linalg.solve(A[k] + np.outer(x, x), x) for k in range(K)])
        else:
            scores = np.array([np.sum(vsum[:, k] * x / (A[:, k] + x * x)) for k in range(K)])
        r = competitor(scores, y[i])
        if scores[y[i]] - scores[r] <= 0:
            mistakes += 1
            if np.any(x):
                updates += 1
                vsum[:, y[i]] += x
                vsum[:, r] -= x
                for k in (y[i], r):
                    if full:
                        A[k] += np.outer(x, x)
                    else:
                        A[:, k] += x * x
    return mistakes, updates


# --------------------------------------------------------------------------- Gaussian step sizes
def cw_steps(rule, m, v, phi):
    """(alpha, beta, c) of docs/algorithms.md "CW var" and "CW stdev".

    Update only when the constraint is violated; alpha in the rationalised form for m > 0
    (equal to the papers' closed form, without its cancellation; see test_closed_forms).
    """
    if not v >= SMALLEST_NORMAL:
        return 0.0, 0.0, 0.0
    if rule == VAR:
        if m >= phi * v:
            return 0.0, 0.0, 0.0
        b = 1 + 2 * phi * m
        root = np.sqrt(b * b - 8 * phi * (m - phi * v))
        alpha = 2 * (phi * v - m) / (v * (root + b)) if b > 0 else (root - b) / (4 * phi * v)
        return alpha, 2 * alpha * phi / (1 + 2 * alpha * phi * v), 2 * alpha * phi
    if m >= phi * np.sqrt(v):
        return 0.0, 0.0, 0.0
    psi, xi = 1 + phi**2 / 2, 1 + phi**2
    root = np.sqrt(m**2 * phi**4 / 4 + v * phi**2 * xi)
    alpha = (phi**2 * v - m * m) / (v * (root + m * psi)) if m > 0 else (root - m * psi) / (v * xi)
    return (alpha, *stdev_covariance(alpha, v, phi))


def stdev_covariance(alpha, v, phi):
    """(beta, c) from sqrt_u = sqrt(x' Sigma_new x), in the rationalised form of docs/algorithms.md
    "Stable step sizes"."""
    avp = alpha * v * phi  # formed first: alpha**2 * v**2 alone can overflow when v is tiny
    sqrt_u = 2 * v / (avp + np.hypot(avp, 2 * np.sqrt(v)))
    return alpha * phi / (sqrt_u + avp), alpha * phi / sqrt_u


def cw_steps_textbook(rule, m, v, phi):
    """alpha exactly as printed (JMLR eqs. 18 and 31), for checking the stable forms."""
    if rule == VAR:
        b = 1 + 2 * phi * m
        return max(0.0, (-b + np.sqrt(b * b - 8 * phi * (m - phi * v))) / (4 * phi * v))
    psi, xi = 1 + phi**2 / 2, 1 + phi**2
    return max(0.0, (-m * psi + np.sqrt(m**2 * phi**4 / 4 + v * phi**2 * xi)) / (v * xi))


def scw2_alpha_textbook(m, v, phi, C):
    """SCW-II's alpha as published (Wang, Zhao, Hoi 2012): the squares are v**2 and phi**2."""
    n = v + 1 / (2 * C)
    gamma = phi * np.sqrt(phi**2 * m**2 * v**2 + 4 * n * v * (n + v * phi**2))
    return max(0.0, (-(2 * m * n + phi**2 * m * v) + gamma) / (2 * (n**2 + n * v * phi**2)))


def gaussian_steps(rule, m, v, phi=1.0, C=1.0, r=1.0):
    """(alpha, beta, c) for every Gaussian rule: ``mu += alpha y Sigma x``,
    ``Sigma^{-1} += c x x'``, ``Sigma -= beta (Sigma x)(Sigma x)'``; no update for a margin
    variance below the smallest normal double or steps that are not finite (the kernels' guards)."""
    if not v >= SMALLEST_NORMAL:
        return 0.0, 0.0, 0.0
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        steps = _gaussian_steps(rule, m, v, phi, C, r)
    return steps if np.all(np.isfinite(steps)) else (0.0, 0.0, 0.0)


def _gaussian_steps(rule, m, v, phi, C, r):
    if rule in (VAR, STDEV):
        return cw_steps(rule, m, v, phi)
    if rule in (AROW, AROW_HINGE):
        if m >= 1:
            return 0.0, 0.0, 0.0
        beta = 1 / (v + r)
        alpha = (1 - m) * beta if rule == AROW else min(1 / (2 * r), (1 - m) / v)
        return alpha, beta, 1 / r
    if m >= phi * np.sqrt(v):
        return 0.0, 0.0, 0.0
    if rule == SCW1:
        alpha = min(C, cw_steps(STDEV, m, v, phi)[0])
    else:
        alpha = scw2_alpha_textbook(m, v, phi, C)
    if alpha <= 0:
        return 0.0, 0.0, 0.0
    return (alpha, *stdev_covariance(alpha, v, phi))


# --------------------------------------------------------------------------- diagonal covariance
def diag_update(s, x, beta, c, covariance, floor=0.0):
    nz = x != 0
    out = s.copy()
    if covariance == "diag-kl":
        out[nz] = 1 / (1 / s[nz] + c * x[nz] ** 2)
    else:
        out[nz] = s[nz] - beta * (s[nz] * x[nz]) ** 2
    out[nz] = np.maximum(out[nz], floor)  # the kernels' variance floor
    return out


def weighted_gaussian_steps(rule, m, v, phi, C, r, weight):
    """Steps for an example of weight ``s`` (docs/algorithms.md "Weighted examples"): the
    example's loss and variance terms scaled by ``s`` are AROW with ``r / s`` (MLJ 2013 eq. 3)
    and SCW with ``s C`` (ICML 2012)."""
    if weight == 1.0:
        return gaussian_steps(rule, m, v, phi, C, r)
    return gaussian_steps(rule, m, v, phi, weight * C, r / weight)


def gaussian_diag_binary(X, y, order, mu, s, rule, covariance, eta=0.9, C=1.0, r=1.0, floor=0.0,
                         weights=None):
    phi = ndtri(eta)
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        m = y[i] * (mu @ x)
        v = s @ (x * x)
        mistakes += m <= 0
        alpha, beta, c = weighted_gaussian_steps(rule, m, v, phi, C, r,
                                                 1.0 if weights is None else weights[i])
        if alpha > 0:
            updates += 1
            mu += alpha * y[i] * s * x
            s[:] = diag_update(s, x, beta, c, covariance, floor)
    return mistakes, updates


def gaussian_diag_multiclass(X, y, order, mu, s, rule, covariance, eta=0.9, C=1.0, r=1.0, floor=0.0,
                             weights=None):
    """``mu`` and ``s`` are (d, K); top-1 update on the two blocks y and r."""
    phi = ndtri(eta)
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        scores = x @ mu
        yi = y[i]
        rc = competitor(scores, yi)
        m = scores[yi] - scores[rc]
        v = (s[:, yi] + s[:, rc]) @ (x * x)
        mistakes += m <= 0
        alpha, beta, c = weighted_gaussian_steps(rule, m, v, phi, C, r,
                                                 1.0 if weights is None else weights[i])
        if alpha > 0:
            updates += 1
            mu[:, yi] += alpha * s[:, yi] * x
            mu[:, rc] -= alpha * s[:, rc] * x
            s[:, yi] = diag_update(s[:, yi], x, beta, c, covariance, floor)
            s[:, rc] = diag_update(s[:, rc], x, beta, c, covariance, floor)
    return mistakes, updates


# --------------------------------------------------------------------------- full covariance
def guarded_increment(c, v, gg, floor):
    """The kernels' cap: the margin variance after the update, v / (1 + c v), stays >= floor gg."""
    if floor <= 0:
        return c
    lowest = floor * gg
    if v <= lowest:
        return 0.0
    return min(c, (v - lowest) / (lowest * v))


def gaussian_full_binary(X, y, order, mu, Sigma, rule, eta=0.9, C=1.0, r=1.0, floor=0.0):
    """The papers' form: ``Sigma -= beta (Sigma x)(Sigma x)'`` with ``beta = c / (1 + c v)``."""
    phi = ndtri(eta)
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        m = y[i] * (mu @ x)
        mistakes += m <= 0
        if not np.any(x):
            continue
        sx = Sigma @ x
        v = x @ sx
        alpha, _, c = gaussian_steps(rule, m, v, phi, C, r)
        if alpha > 0:
            updates += 1
            mu += alpha * y[i] * sx
            c = guarded_increment(c, v, x @ x, floor)
            Sigma -= c / (1 + c * v) * np.outer(sx, sx)
    return mistakes, updates


def gaussian_full_multiclass(X, y, order, mu, Sigma, rule, eta=0.9, C=1.0, r=1.0, floor=0.0):
    """``mu`` is (d, K), ``Sigma`` is (K, d, d)."""
    phi = ndtri(eta)
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        scores = x @ mu
        yi = y[i]
        rc = competitor(scores, yi)
        m = scores[yi] - scores[rc]
        mistakes += m <= 0
        if not np.any(x):
            continue
        sy, sr = Sigma[yi] @ x, Sigma[rc] @ x
        v = x @ sy + x @ sr
        alpha, _, c = gaussian_steps(rule, m, v, phi, C, r)
        if alpha > 0:
            updates += 1
            mu[:, yi] += alpha * sy
            mu[:, rc] -= alpha * sr
            c = guarded_increment(c, v, 2 * (x @ x), floor)
            beta = c / (1 + c * v)
            Sigma[yi] -= beta * np.outer(sy, sy)
            Sigma[rc] -= beta * np.outer(sr, sr)
    return mistakes, updates


# --------------------------------------------------------------------------- exact diagonal
def exact_alpha(rule, m, w, phi):
    """The root alpha > L = max(0, -m/v) of f (var) or g (stdev) (docs/algorithms.md
    "CW exact diagonal"), by Brent's
    method in alpha itself (the kernel uses Newton in t = m + alpha v: an independent check)."""
    v = w.sum()
    if rule == VAR:
        f = lambda a: m + a * v - np.sum(phi * w / (1 + 2 * a * phi * w))  # noqa: E731
        hi = (phi * v - m) / v
    else:
        f = lambda a: m + a * v - np.sum(phi**2 * w / (m + a * v + a * phi**2 * w))  # noqa: E731
        hi = (phi * np.sqrt(v) - m) / v
    lo = max(0.0, -m / v)
    if f(hi) == 0:
        return hi
    if rule == STDEV and m == 0:
        lo = 1e-300  # g(0) = -inf; brentq needs finite values
    return brentq(f, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)


def exact_violated(rule, m, v, phi):
    if not v >= SMALLEST_NORMAL:
        return False
    return m < phi * v if rule == VAR else m < phi * np.sqrt(v)


def exact_update(rule, s, x2, alpha, t, phi, floor):
    """Variances after the exact update, for the entries with x_j != 0."""
    w = s * x2
    new = s / (1 + 2 * alpha * phi * w) if rule == VAR else s * t / (t + alpha * phi**2 * w)
    return np.maximum(new, floor)


def gaussian_exact_binary(X, y, order, mu, s, rule, eta=0.9, floor=0.0):
    phi = ndtri(eta)
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        nz = x != 0
        m = y[i] * (mu @ x)
        w = s[nz] * x[nz] ** 2
        mistakes += m <= 0
        if not exact_violated(rule, m, w.sum(), phi):
            continue
        alpha = exact_alpha(rule, m, w, phi)
        if not (alpha > 0 and np.isfinite(alpha)):  # the kernels' guard
            continue
        updates += 1
        t = m + alpha * w.sum()
        mu += alpha * y[i] * s * x
        s[nz] = exact_update(rule, s[nz], x[nz] ** 2, alpha, t, phi, floor)
    return mistakes, updates


def gaussian_exact_multiclass(X, y, order, mu, s, rule, eta=0.9, floor=0.0):
    phi = ndtri(eta)
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        nz = x != 0
        scores = x @ mu
        yi = y[i]
        rc = competitor(scores, yi)
        m = scores[yi] - scores[rc]
        mistakes += m <= 0
        w = np.concatenate([s[nz, yi] * x[nz] ** 2, s[nz, rc] * x[nz] ** 2])
        if not exact_violated(rule, m, w.sum(), phi):
            continue
        alpha = exact_alpha(rule, m, w, phi)
        if not (alpha > 0 and np.isfinite(alpha)):  # the kernels' guard
            continue
        updates += 1
        t = m + alpha * w.sum()
        mu[:, yi] += alpha * s[:, yi] * x
        mu[:, rc] -= alpha * s[:, rc] * x
        s[nz, yi] = exact_update(rule, s[nz, yi], x[nz] ** 2, alpha, t, phi, floor)
        s[nz, rc] = exact_update(rule, s[nz, rc], x[nz] ** 2, alpha, t, phi, floor)
    return mistakes, updates


# --------------------------------------------------------------------------- building blocks
def kernel_ready(indptr, indices, data, n_columns):
    """The kernel input contract, checked with numpy."""
    if len(indptr) < 1 or indptr[0] != 0 or indptr[-1] != len(data) or len(indices) != len(data):
        return False
    if np.any(np.diff(indptr) < 0) or np.any(data == 0) or not np.all(np.isfinite(data)):
        return False
    if np.any(np.abs(data) > 1e30):  # textcw._csr.MAX_ABS_VALUE
        return False
    if len(indices) and (indices.min() < 0 or indices.max() >= n_columns):
        return False
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    same_row = rows[1:] == rows[:-1]
    return not np.any(same_row & (np.diff(indices) <= 0))


def cholesky_update(R, w):
    """Upper factor of R'R + ww', from numpy's Cholesky of the explicit matrix."""
    return np.linalg.cholesky(R.T @ R + np.outer(w, w)).T


# --------------------------------------------------------------------------- multi-class, k competitors
SEQ, PAR, EXACT = "seq", "par", "exact"


def competitors(scores, y, k):
    """The k highest-scoring labels other than y, best first; ties to the lowest index."""
    labels = [label for label in np.lexsort((np.arange(len(scores)), -scores)) if label != y]
    return [int(label) for label in labels[:k]]


def box_qp(b, Q, upper=np.inf):
    """argmax b'l - l'Ql/2 over 0 <= l <= upper, by enumerating which bounds are active.

    Independent of the kernels' coordinate ascent: for each assignment of every multiplier to
    "zero", "free" or "at the upper bound", solve the free part and keep the one that satisfies
    the KKT conditions (there is exactly one, Q being positive definite).
    """
    import itertools

    k = len(b)
    states = (0, 1, 2) if np.isfinite(upper) else (0, 1)
    for assignment in itertools.product(states, repeat=k):
        lam = np.where(np.array(assignment) == 2, upper, 0.0)
        free = np.array(assignment) == 1
        if free.any():
            rhs = b[free] - Q[np.ix_(free, ~free)] @ lam[~free]
            lam[free] = np.linalg.solve(Q[np.ix_(free, free)], rhs)
        grad = b - Q @ lam
        scale = 1e-10 * (1 + np.abs(b).max())
        ok = np.all(lam[free] > -scale) and np.all(lam[free] < upper + scale)
        ok &= np.all(grad[np.array(assignment) == 0] <= scale)
        ok &= np.all(grad[np.array(assignment) == 2] >= -scale)
        if ok:
            return lam
    raise AssertionError("no KKT point found")


def first_order_multiclass_kbest(X, y, order, W, rule, strategy, k, C=1.0):
    """seq / par / exact with k competitors (first_order_kbest); W is (d, K)."""
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        scores = x @ W
        yi = y[i]
        comp = competitors(scores, yi, k)
        mistakes += scores[yi] - scores[comp[0]] <= 0
        if not np.any(x):
            continue
        q = 2 * (x @ x)
        changed = False
        if strategy == SEQ:
            for j, rc in enumerate(comp):
                m = scores[yi] - scores[rc] if j == 0 else x @ W[:, yi] - x @ W[:, rc]
                tau = pa_tau(rule, m, q, C)
                if tau > 0:
                    changed = True
                    W[:, yi] += tau * x
                    W[:, rc] -= tau * x
        else:
            m0 = np.array([scores[yi] - scores[rc] for rc in comp])
            if strategy == PAR:
                tau = np.array([pa_tau(rule, m, q, C) for m in m0]) / k
            elif x @ x < SMALLEST_NORMAL:  # the kernel's guard: no joint step
                tau = np.zeros(k)
            else:
                xx = x @ x
                Q = xx * (np.eye(k) + np.ones((k, k)))
                if rule == PA2:
                    Q = Q + np.eye(k) / (2 * C)
                tau = box_qp(1 - m0, Q, C if rule == PA1 else np.inf)
                tau = np.where(tau > 0, tau, 0.0)
            if tau.sum() > 0 and np.isfinite(tau.sum()):
                changed = True
                W[:, yi] += tau.sum() * x
                for t, rc in zip(tau, comp):
                    W[:, rc] -= t * x
        updates += changed
    return mistakes, updates


def _pair_step(rule, m, vy, vr, phi, C, r):
    return gaussian_steps(rule, m, vy + vr, phi, C, r)


def cw_joint_dense(rule, m0, Sigma0, G, phi, tol=1e-14):
    """The k-constraint CW problem from dense matrices: ``(lambda, D)``.

    Cyclic coordinate ascent (Hildreth) where each coordinate's variance comes from explicit
    inverses and its root from Brent's method, not from the kernels' closed forms.
    ``Sigma0`` is the covariance restricted to the coordinates ``G`` (columns ``g_j``) touches.
    """
    k = G.shape[1]
    P0 = np.linalg.inv(Sigma0)
    V = G.T @ Sigma0 @ G
    lam, D = np.zeros(k), np.zeros(k)
    for sweep in range(2000):
        old = lam.copy()
        for j in range(k):
            Dj = D.copy()
            Dj[j] = 0.0
            S = np.linalg.inv(P0 + G @ np.diag(Dj) @ G.T)
            W = G[:, j] @ S @ G[:, j]
            a = m0[j] + V[j] @ lam - V[j, j] * lam[j]

            def variance(l, W=W):
                if rule == VAR:
                    return W / (1 + 2 * phi * l * W)
                u = (-l * W * phi + np.sqrt(l**2 * W**2 * phi**2 + 4 * W)) / 2  # the papers' sqrt_u
                return u * u

            def gap(l, a=a, j=j, variance=variance):
                v = variance(l)
                return a + V[j, j] * l - (phi * v if rule == VAR else phi * np.sqrt(v))

            if gap(0.0) >= 0:
                lam[j], D[j] = 0.0, 0.0
                continue
            hi = 1.0
            while gap(hi) < 0:
                hi *= 2
            lam[j] = brentq(gap, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
            v = variance(lam[j])
            D[j] = 2 * phi * lam[j] if rule == VAR else phi * lam[j] / np.sqrt(v)
        if np.max(np.abs(lam - old)) <= tol * max(lam.max(), 1e-300):
            return lam, D
    raise AssertionError(f"no convergence in {sweep + 1} sweeps: {lam - old}")


def _joint_blocks(labels, x, blocks):
    """Stack the touched coordinates of the given label blocks: (rows, G-builder)."""
    nz = np.flatnonzero(x)
    return nz, [(label, nz) for label in labels]


def gaussian_diag_multiclass_kbest(X, y, order, mu, s, rule, covariance, strategy, k, eta=0.9, C=1.0,
                                   r=1.0, floor=0.0):
    """seq / par / exact for diagonal covariances, written from docs/algorithms.md "Multi-class".

    par: k copies of the model each updated by one pair from the same start, then the mean of
    the means and of the precisions. exact: the joint solution over the touched coordinates of
    the involved blocks as dense matrices, then the diagonal of the joint precision (diag-kl) or
    covariance (diag-l2); AROW (MLJ 2013 Fig. 2) with eq. 27's QP and eq. 29's covariance over
    every label's features.
    """
    phi = ndtri(eta)
    mistakes = updates = 0
    K = mu.shape[1]
    for i in order:
        x = dense_row(X, i)
        nz = x != 0
        scores = x @ mu
        yi = y[i]
        comp = competitors(scores, yi, k)
        mistakes += scores[yi] - scores[comp[0]] <= 0
        if not nz.any():
            continue
        changed = False
        if strategy == SEQ:
            for j, rc in enumerate(comp):
                m = scores[yi] - scores[rc] if j == 0 else x @ mu[:, yi] - x @ mu[:, rc]
                v = (s[:, yi] + s[:, rc]) @ (x * x)
                alpha, beta, c = gaussian_steps(rule, m, v, phi, C, r)
                if alpha > 0:
                    changed = True
                    mu[:, yi] += alpha * s[:, yi] * x
                    mu[:, rc] -= alpha * s[:, rc] * x
                    s[:, yi] = diag_update(s[:, yi], x, beta, c, covariance, floor)
                    s[:, rc] = diag_update(s[:, rc], x, beta, c, covariance, floor)
        elif strategy == PAR:
            means, precisions = [], []
            for rc in comp:
                mj, sj = mu.copy(), s.copy()
                m = scores[yi] - scores[rc]
                v = (s[:, yi] + s[:, rc]) @ (x * x)
                alpha, beta, c = gaussian_steps(rule, m, v, phi, C, r)
                if alpha > 0:
                    changed = True
                    mj[:, yi] += alpha * s[:, yi] * x
                    mj[:, rc] -= alpha * s[:, rc] * x
                    sj[:, yi] = diag_update(s[:, yi], x, beta, c, covariance, floor)
                    sj[:, rc] = diag_update(s[:, rc], x, beta, c, covariance, floor)
                means.append(mj)
                precisions.append(1 / sj)
            if changed:
                mu[:] = np.mean(means, axis=0)
                s[:] = np.maximum(1 / np.mean(precisions, axis=0), floor)
        elif min((x * x) @ s[:, label] for label in [yi] + comp) < SMALLEST_NORMAL:
            pass  # a score variance underflows: the kernels make no joint step
        else:
            xs = x[nz]
            labels = [yi] + comp if rule != AROW else list(range(K))
            where = {label: n for n, label in enumerate(labels)}
            n = len(xs)
            Sigma0 = np.diag(np.concatenate([s[nz, label] for label in labels]))
            G = np.zeros((n * len(labels), k))
            for j, rc in enumerate(comp):
                G[where[yi] * n:(where[yi] + 1) * n, j] = xs
                G[where[rc] * n:(where[rc] + 1) * n, j] = -xs
            m0 = np.array([scores[yi] - scores[rc] for rc in comp])
            V = G.T @ Sigma0 @ G
            if rule == AROW:
                lam = box_qp(1 - m0, V + r * np.ones((k, k)))
                f = np.tile(xs, K)
                Sf = Sigma0 @ f
                Sigma = Sigma0 - np.outer(Sf, Sf) / (r + f @ Sf)
                P = np.linalg.inv(Sigma0) + np.outer(f, f) / r
            else:
                lam, D = cw_joint_dense(rule, m0, Sigma0, G, phi)
                P = np.linalg.inv(Sigma0) + G @ np.diag(D) @ G.T
                Sigma = np.linalg.inv(P)
            lam = np.where(lam > 0, lam, 0.0)
            if lam.sum() > 0:
                changed = True
                delta = Sigma0 @ G @ lam
                new = np.diag(Sigma) if covariance == "diag-l2" else 1 / np.diag(P)
                for label, b in where.items():
                    mu[nz, label] += delta[b * n:(b + 1) * n]
                    s[nz, label] = np.maximum(new[b * n:(b + 1) * n], floor)
        updates += changed
    return mistakes, updates


def gaussian_full_multiclass_kbest(X, y, order, mu, Sigma, rule, strategy, k, eta=0.9, C=1.0, r=1.0,
                                   floor=0.0):
    """seq / par / exact with a full covariance per label; ``Sigma`` is (K, d, d), kept as is.

    Pairs update as :func:`gaussian_full_multiclass`; par averages means and (explicitly
    inverted) precisions; exact forms the joint covariance of the stacked blocks and keeps its
    diagonal blocks.
    """
    phi = ndtri(eta)
    mistakes = updates = 0
    K, d = Sigma.shape[0], Sigma.shape[1]

    def pair(mu, Sigma, yi, rc, m):
        sy, sr = Sigma[yi] @ x, Sigma[rc] @ x
        vy, vr = x @ sy, x @ sr
        alpha, _, c = gaussian_steps(rule, m, vy + vr, phi, C, r)
        if alpha <= 0:
            return False
        mu[:, yi] += alpha * sy
        mu[:, rc] -= alpha * sr
        c = guarded_increment(c, vy + vr, 2 * (x @ x), floor)
        beta = c / (1 + c * (vy + vr))
        Sigma[yi] -= beta * np.outer(sy, sy)
        Sigma[rc] -= beta * np.outer(sr, sr)
        return True

    for i in order:
        x = dense_row(X, i)
        scores = x @ mu
        yi = y[i]
        comp = competitors(scores, yi, k)
        mistakes += scores[yi] - scores[comp[0]] <= 0
        if not np.any(x):
            continue
        changed = False
        if strategy == SEQ:
            for j, rc in enumerate(comp):
                m = scores[yi] - scores[rc] if j == 0 else x @ mu[:, yi] - x @ mu[:, rc]
                changed |= pair(mu, Sigma, yi, rc, m)
        elif strategy == PAR:
            means, precisions = [], []
            for rc in comp:
                mj, Sj = mu.copy(), Sigma.copy()
                changed |= pair(mj, Sj, yi, rc, scores[yi] - scores[rc])
                means.append(mj)
                precisions.append(np.linalg.inv(Sj))
            if changed:
                mu[:] = np.mean(means, axis=0)
                for label in range(K):
                    Sigma[label] = np.linalg.inv(np.mean([p[label] for p in precisions], axis=0))
        elif min(x @ Sigma[label] @ x for label in [yi] + comp) < SMALLEST_NORMAL:
            pass  # a score variance underflows: the kernels make no joint step
        else:
            labels = [yi] + comp if rule != AROW else list(range(K))
            where = {label: n for n, label in enumerate(labels)}
            Sigma0 = np.zeros((d * len(labels),) * 2)
            for label, b in where.items():
                Sigma0[b * d:(b + 1) * d, b * d:(b + 1) * d] = Sigma[label]
            G = np.zeros((d * len(labels), k))
            for j, rc in enumerate(comp):
                G[where[yi] * d:(where[yi] + 1) * d, j] = x
                G[where[rc] * d:(where[rc] + 1) * d, j] = -x
            m0 = np.array([scores[yi] - scores[rc] for rc in comp])
            if rule == AROW:
                lam = box_qp(1 - m0, G.T @ Sigma0 @ G + r * np.ones((k, k)))
                f = np.tile(x, K)
                Sf = Sigma0 @ f
                joint = Sigma0 - np.outer(Sf, Sf) / (r + f @ Sf)
            else:
                lam, D = cw_joint_dense(rule, m0, Sigma0, G, phi)
                joint = np.linalg.inv(np.linalg.inv(Sigma0) + G @ np.diag(D) @ G.T)
            lam = np.where(lam > 0, lam, 0.0)
            if lam.sum() > 0:
                changed = True
                delta = Sigma0 @ G @ lam
                for label, b in where.items():
                    mu[:, label] += delta[b * d:(b + 1) * d]
                    block = joint[b * d:(b + 1) * d, b * d:(b + 1) * d]
                    Sigma[label] = (block + block.T) / 2
        updates += changed
    return mistakes, updates


def gaussian_exact_multiclass_kbest(X, y, order, mu, s, rule, strategy, k, eta=0.9, floor=0.0):
    """seq / par over the exact diagonal pair update (:func:`gaussian_exact_multiclass`)."""
    phi = ndtri(eta)
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        nz = x != 0
        scores = x @ mu
        yi = y[i]
        comp = competitors(scores, yi, k)
        mistakes += scores[yi] - scores[comp[0]] <= 0
        if not nz.any():
            continue
        changed = False

        def pair(mu, s, rc, m, s0):
            w = np.concatenate([s0[nz, yi] * x[nz] ** 2, s0[nz, rc] * x[nz] ** 2])
            if not exact_violated(rule, m, w.sum(), phi):
                return False
            alpha = exact_alpha(rule, m, w, phi)
            if not (alpha > 0 and np.isfinite(alpha)):  # the kernels' guard
                return False
            t = m + alpha * w.sum()
            mu[:, yi] += alpha * s0[:, yi] * x
            mu[:, rc] -= alpha * s0[:, rc] * x
            s[nz, yi] = exact_update(rule, s0[nz, yi], x[nz] ** 2, alpha, t, phi, floor)
            s[nz, rc] = exact_update(rule, s0[nz, rc], x[nz] ** 2, alpha, t, phi, floor)
            return True

        if strategy == SEQ:
            for j, rc in enumerate(comp):
                m = scores[yi] - scores[rc] if j == 0 else x @ mu[:, yi] - x @ mu[:, rc]
                changed |= pair(mu, s, rc, m, s.copy())
        else:
            means, precisions = [], []
            for rc in comp:
                mj, sj = mu.copy(), s.copy()
                changed |= pair(mj, sj, rc, scores[yi] - scores[rc], s)
                means.append(mj)
                precisions.append(1 / sj)
            if changed:
                mu[:] = np.mean(means, axis=0)
                s[:] = np.maximum(1 / np.mean(precisions, axis=0), floor)
        updates += changed
    return mistakes, updates
