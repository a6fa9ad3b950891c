"""nerts-p2p: serverless Nerts for a local network."""
