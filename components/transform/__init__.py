from components.transform.component import Transform

__all__ = ["Transform"]
