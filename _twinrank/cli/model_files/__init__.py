"""``twinrank`` commands on model files: inspect, export, import."""
