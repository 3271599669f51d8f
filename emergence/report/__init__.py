"""What the engine writes for a reader: the report writer (:mod:`~emergence.report.writer`: Markdown
sections and their JSON), every figure (:mod:`~emergence.report.figures`) and the theory status page
(:mod:`~emergence.report.status_page`).  It lays out numbers the layers below computed; it decides nothing.
"""
