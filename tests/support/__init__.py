"""What the tests share: brute-force references, chains, uploads, servers and the websocket client."""
