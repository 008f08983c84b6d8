"""Integer variant codes shared by the kernels and the learner classes."""

# First-order update rules.
PERCEPTRON = 0
PA = 1
PA1 = 2
PA2 = 3

# Gaussian (mean + covariance) update rules.
CW_VAR = 0
CW_STDEV = 1

# Diagonal covariance forms.
DIAG_KL = 0  # project: diagonalise the inverse (precision) update
DIAG_L2 = 1  # drop: diagonalise the covariance update
