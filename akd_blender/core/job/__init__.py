"""The job seam: one job as the command line and the panel hand it over, the worker thread, Ray, the model kept between jobs."""
