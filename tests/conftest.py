"""The tests' own game: Sealed Lots (tests/toy_game.py), registered by its entry alone, so that every test
parametrized over the registered games (the contract suite, golden games, CLIs) plays it too."""
import gemenvs

import toy_game

gemenvs.register_game(toy_game.ENTRY)
