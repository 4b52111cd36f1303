# Oracle snippet: every static event's format and id, and the ring buffer headers.
# Run:  kernel-oracle [--series 6.12] --out OUTDIR run - < tools/oracle/event-census.sh
# Then: node tools/oracle/event-census-fixtures.mjs SERIES OUTDIR  (writes test/fixtures/kernel-SERIES/events/)
O=$KORACLE_OUT
uname -a > $O/uname
cd events
for f in */*/format; do echo "== events/$f"; cat $f; done > $O/event-formats
for f in */*/id; do echo "events/$f $(cat $f)"; done > $O/event-ids
cat header_page > $O/header_page
cat header_event > $O/header_event
