"""Gem Jam: gems and sets in the Shrine, gold in the Vault, spells with counter-spell chains, the King's Vault."""
