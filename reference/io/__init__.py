"""Data in and out: the :class:`Dataset`, LETOR / SVMlight files, the bundled MQ2008, and the model format
(trees, ensembles and the JSON file both twins write and read)."""
