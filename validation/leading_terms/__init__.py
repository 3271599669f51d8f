"""Leading-term validation: the attention-only model of Definition 3.1 trained against the theory."""
