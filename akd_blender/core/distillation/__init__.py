"""The distillation: its starts (library, drawing, ranking), the SDS loop and its regularisers, data-parallel runs."""
