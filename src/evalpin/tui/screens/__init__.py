"""Screens: the review (default), the refusal banner, the verdict, the launch panel, help."""
