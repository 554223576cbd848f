"""The papers' rankers on the fast twin's engine: same classes, same parameters, same models."""
