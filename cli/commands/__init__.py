"""The commands, by family: each module registers its commands on ``common.app``."""
