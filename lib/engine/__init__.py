"""The engine: configuration, model, data, training, run directories, experiments, plans,
sweeps, bench and adoption: whatever reads or writes runs/ and trains. It imports nothing
from the claims or the book layer."""
