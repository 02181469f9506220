"""Real corpora in, workspaces out (docs/real-corpora.md).

- :mod:`~speechkit.corpora.from_lhotse`: Lhotse manifests (recordings, supervisions, cuts) to a workspace;
- :mod:`~speechkit.corpora.folder`: a folder of recordings with STM / SegLST / RTTM references and a people CSV;
- :mod:`~speechkit.corpora.to_lhotse`: a workspace (synthetic ones included) to Lhotse manifests.

Recordings are grouped into meeting series by :mod:`~speechkit.corpora.series`; speakers are named by
a people CSV (:mod:`~speechkit.corpora.people`). Both importers hand
:class:`~speechkit.corpora.records.SourceMeeting` records to
:func:`~speechkit.corpora.build.build_workspace`, which groups nothing and guesses nothing: it
writes audio, references, enrollments cut from solo speech (:mod:`~speechkit.corpora.enroll`) and
the term list (:mod:`~speechkit.corpora.terms`) into a temporary folder and renames it onto the
target at the end, so a failed import leaves no workspace behind.
"""
