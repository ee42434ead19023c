// A page about something in flight (a run) reloads itself until it has ended.
"use strict";
if (document.body && document.body.dataset.refresh) {
  setTimeout(function () { window.location.reload(); }, 1000);
}
