"""``twinrank`` commands that train and score: train, predict, grid, experiment."""
