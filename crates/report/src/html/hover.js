// Hover values for herd's charts. Each chart figure carries its data in data-hover:
// {"x": [cursor positions in viewBox units], "t": [heading per position], "l": left, "r": right,
//  "s": [{"n": name, "c": colour, "v": [value text per position or null]}]}.
(function () {
  "use strict";
  var figures = document.querySelectorAll("figure.chart[data-hover]");
  var ready = 0;
  Array.prototype.forEach.call(figures, function (fig) {
    var d = JSON.parse(fig.getAttribute("data-hover"));
    var svg = fig.querySelector("svg");
    var tip = fig.querySelector(".tip");
    var cursor = svg.querySelector(".cursor");
    var width = svg.viewBox.baseVal.width;
    ready += 1;
    if (!d.x.length) { return; }
    function nearest(x) {
      var lo = 0, hi = d.x.length - 1;
      while (hi - lo > 1) {
        var mid = (lo + hi) >> 1;
        if (d.x[mid] < x) { lo = mid; } else { hi = mid; }
      }
      return Math.abs(d.x[lo] - x) <= Math.abs(d.x[hi] - x) ? lo : hi;
    }
    function hide() {
      tip.hidden = true;
      cursor.style.visibility = "hidden";
    }
    function show(ev) {
      var box = svg.getBoundingClientRect();
      var x = (ev.clientX - box.left) / box.width * width;
      if (x < d.l - 4 || x > d.r + 4) { hide(); return; }
      var i = nearest(x);
      cursor.setAttribute("x1", d.x[i]);
      cursor.setAttribute("x2", d.x[i]);
      cursor.style.visibility = "visible";
      tip.textContent = "";
      var head = document.createElement("div");
      head.className = "head";
      head.textContent = d.t[i];
      tip.appendChild(head);
      d.s.forEach(function (s) {
        if (s.v[i] === null) { return; }
        var row = document.createElement("div");
        row.className = "row";
        var key = document.createElement("i");
        key.style.background = s.c;
        var name = document.createElement("span");
        name.textContent = s.n;
        var value = document.createElement("span");
        value.className = "v";
        value.textContent = s.v[i];
        row.appendChild(key);
        row.appendChild(name);
        row.appendChild(value);
        tip.appendChild(row);
      });
      tip.hidden = false;
      var px = d.x[i] / width * box.width;
      var left = px + 14;
      if (left + tip.offsetWidth > box.width) { left = px - 14 - tip.offsetWidth; }
      tip.style.left = Math.max(0, left) + "px";
    }
    svg.addEventListener("mousemove", show);
    svg.addEventListener("mouseleave", hide);
  });
  document.documentElement.setAttribute("data-charts-ready", String(ready));
  // `#hover=CHART-ID:FRACTION` opens the page hovering that chart (links, tests).
  var m = /^#hover=([\w-]+):([\d.]+)$/.exec(location.hash);
  var target = m && document.getElementById(m[1]);
  if (target) {
    var svg = target.querySelector("svg");
    var box = svg.getBoundingClientRect();
    svg.dispatchEvent(new MouseEvent("mousemove", {
      clientX: box.left + box.width * parseFloat(m[2]),
      clientY: box.top + box.height / 2
    }));
  }
})();
