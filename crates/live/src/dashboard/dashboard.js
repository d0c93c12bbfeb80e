// Follows the run: each event replaces the view; at the end the final report becomes a link
// (made in the page, so it works after herd exits) and the stream is closed.
(function () {
  "use strict";
  var view = document.getElementById("view");
  var updates = 0;
  herdHover();
  var events = new EventSource("/events");
  events.addEventListener("view", function (e) {
    view.innerHTML = e.data;
    herdHover();
    updates += 1;
    document.body.setAttribute("data-updates", String(updates));
  });
  events.addEventListener("report", function (e) {
    var link = document.getElementById("report-link");
    link.href = URL.createObjectURL(new Blob([e.data], { type: "text/html" }));
    document.getElementById("final").hidden = false;
  });
  events.addEventListener("end", function () {
    events.close();
    document.body.setAttribute("data-ended", "true");
    var stop = document.getElementById("stop");
    if (stop) { stop.hidden = true; }
  });
  var stop = document.getElementById("stop");
  if (stop) {
    stop.addEventListener("click", function () {
      stop.disabled = true;
      fetch("/stop" + location.search, { method: "POST", headers: { "X-Herd-Control": "stop" } })
        .then(function (r) { return r.text().then(function (t) { stop.textContent = r.ok ? "Stopping…" : t; }); })
        .catch(function () { stop.textContent = "herd did not answer"; });
    });
  }
})();
