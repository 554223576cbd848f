"""What the trees are fitted to: gradients and hessians of the pointwise losses and of LambdaRank, and
quantized gradients."""
