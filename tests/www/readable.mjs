// What a student must be able to read (used by run.mjs): the residual chart's numbers are
// the lengths of the bars beside them, a phone shows the backend notice whole and keeps the
// prompt's menus on screen, and an error hides no heading of the page.

/** Each visible heading that something else covers at its centre, with what covers it. */
const coveredHeadings = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll("h1, h2, h3")]
      .filter((e) => e.checkVisibility() && e.getBoundingClientRect().height > 0)
      .map((e) => {
        const r = e.getBoundingClientRect();
        const x = r.left + Math.min(r.width / 2, 20);
        const y = r.top + r.height / 2;
        if (y < 0 || y > innerHeight) return null;
        const top = document.elementFromPoint(x, y);
        return top && !e.contains(top) && !top.contains(e) ? `"${e.textContent.trim().slice(0, 24)}" under ${top.tagName.toLowerCase()}#${top.id}` : null;
      })
      .filter(Boolean),
  );

export function addReadableTests(tests, { browser, open, loaded, check, playToEnd }) {
  // The residual chart: one scale for bars and numbers. The target's bar gives the scale
  // (its probability is in the track's title); each number must be the length, on that
  // scale, of a bar in its row other than the target's and the draft's.
  tests.residualScale = async () => {
    const b = await browser();
    try {
      const page = await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=60&seed=2");
      await loaded(page);
      await playToEnd(page);
      const rounds = [...new Set(await page.$$eval('#output .otok[data-source="resampled"]', (ss) => ss.map((s) => s.dataset.round)))].slice(0, 4);
      const bad = [];
      let rows = 0;
      for (const r of rounds) {
        await page.click(`#output .otok[data-source="resampled"][data-round="${r}"]`);
        await page.waitForSelector("#stage-focus .resview .resbar", { timeout: 10_000 });
        const chart = await page.$$eval("#stage-focus .resview .resbar", (bars) =>
          bars.map((bar) => {
            const track = bar.querySelector(".track");
            const m = track.title.match(/^.* ([\d.]+), .* ([\d.]+), residual ([\d.]+)$/);
            const width = (e) => e.getBoundingClientRect().width;
            const others = [...track.children].filter((e) => !e.matches(".whole, .covered, .subline") && !e.hidden).map(width);
            return { label: bar.querySelector(".lab").textContent, val: bar.querySelector(".val").textContent, base: m && Number(m[1]), residual: m && Number(m[3]), whole: width(track.querySelector(".whole")), others };
          }),
        );
        // Pixels per unit of probability, from the row with the largest target bar.
        const ref = chart.filter((x) => x.base >= 0.05).sort((x, y) => y.base - x.base)[0];
        if (!ref) continue;
        const perUnit = ref.whole / ref.base;
        for (const row of chart.filter((x) => x.residual >= 0.05)) {
          rows += 1;
          // Twice what rounding allows: the title's three decimals (of the scale's target
          // probability and of the residual) and a pixel on either bar.
          const slack = 2 * (row.residual * (0.0005 / ref.base + 1 / ref.whole) + 1 / perUnit + 0.0005);
          const matched = Math.abs(Number(row.val) - row.residual) <= 0.0051 && row.others.some((w) => Math.abs(w / perUnit - row.residual) <= slack);
          if (!matched) bad.push(`round ${Number(r) + 1} '${row.label}' (residual ${row.residual}, scale from ${ref.base} = ${ref.whole} px): ${row.val} beside bars of ${row.others.map((w) => (w / perUnit).toFixed(3)).join(", ")} on the target bar's scale`);
        }
      }
      check(rows >= 3 && bad.length === 0, `residual chart: each of ${rows} numbers is the length of the bar beside it, on the target bar's scale`, bad.join(" | "));
    } finally {
      await b.close();
    }
  };

  // A 375 px phone: the backend notice is read whole, nothing leaves the screen sideways,
  // and the prompt's Models and Examples menus stay on it.
  tests.phoneHeader = async () => {
    const b = await browser();
    try {
      const page = b.context.pages()[0] ?? (await b.context.newPage());
      await page.setViewportSize({ width: 375, height: 812 });
      // No WebGPU here: auto falls back to the CPU and says why in the notice.
      await open(b.context, "backend=auto&speed=instant&autoplay=0&maxTokens=20");
      await loaded(page);
      await page.evaluate(() => (document.getElementById("settings-box").open = true));
      const seen = await page.evaluate(() => {
        const box = (e) => {
          const r = e.getBoundingClientRect();
          return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
        };
        const n = document.getElementById("notice");
        const row = n.parentElement;
        return {
          width: innerWidth,
          page: document.documentElement.scrollWidth,
          text: n.textContent,
          shown: !n.hidden && n.checkVisibility(),
          notice: box(n),
          row: box(row),
          cut: n.scrollWidth > n.clientWidth + 1 || n.scrollHeight > n.clientHeight + 1,
          menus: ["source", "example"].map((id) => ({ id, ...box(document.getElementById(id)) })),
        };
      });
      const inside = (r) => r.left >= 0 && r.right <= seen.width + 0.5;
      const rowHolds = seen.notice.top >= seen.row.top - 0.5 && seen.notice.bottom <= seen.row.bottom + 0.5;
      check(seen.shown && /CPU/.test(seen.text) && !seen.cut && inside(seen.notice) && rowHolds,
        `375 px: the backend notice is shown whole ("${seen.text}")`, JSON.stringify(seen));
      check(seen.page <= seen.width && seen.menus.every(inside),
        `375 px: nothing leaves the screen sideways (page ${seen.page} px wide) and the Models and Examples menus stay on it`, JSON.stringify(seen.menus));
    } finally {
      await b.close();
    }
  };

  // An error hides nothing: on a laptop and a phone, every heading on screen stays visible.
  tests.errorInFlow = async () => {
    const b = await browser();
    try {
      const page = b.context.pages()[0] ?? (await b.context.newPage());
      for (const [width, height] of [[1280, 900], [375, 812]]) {
        await page.setViewportSize({ width, height });
        await open(b.context, "backend=cpu&speed=instant&autoplay=0&maxTokens=20");
        await loaded(page);
        await page.evaluate(() => (document.getElementById("settings-box").open = true));
        await page.fill("#prompt", "naïve café");
        await page.click("#play");
        await page.waitForFunction(() => !document.getElementById("error").hidden, null, { timeout: 10_000 });
        // The error on screen, scrolled into view as a student would see it.
        await page.$eval("#error", (e) => e.scrollIntoView({ block: "center" }));
        const covered = await coveredHeadings(page);
        check(covered.length === 0, `${width} px: the error covers no heading`, covered.join("; "));
      }
    } finally {
      await b.close();
    }
  };
}
