// The MCP servers part of Settings → Tools: each server of mcp.json with its state (starting;
// ready with N tools; failed and why), its tools with one checkbox per character. The core
// decides everything (yui_core::tools::mcp, reported through tools_list); this only renders. The
// checkboxes call `onToggle(presetId, toolName, checked, box)`, which tools-panel.js forwards.

import { el } from "./panels.js";

function stateLine(s) {
  switch (s.state) {
    case "ready": {
      const n = (s.tools ?? []).length;
      return `ready with ${n} tool${n === 1 ? "" : "s"}`;
    }
    case "failed": return `failed: ${s.reason ?? "unknown reason"}`;
    case "stopped": return `stopped: ${s.reason ?? "unknown reason"} (starts again at the next call)`;
    case "starting": return "starting…";
    case "disabled": return "disabled in mcp.json";
    default: return "not started yet (starts when a character window opens)";
  }
}

function where(s) {
  if (s.transport === "http") return s.url;
  return [s.command, ...(s.args ?? [])].join(" ");
}

/** The MCP servers section for `mcp` (the report's `mcp` part) and the characters `presets`. */
export function mcpSection(mcp, presets, onToggle) {
  if (!mcp) return null;
  const servers = mcp.servers ?? [];
  const head = el(
    "p",
    { className: "muted small" },
    mcp.path ? `MCP servers, defined in ${mcp.path}` : "MCP servers: no config directory found.",
    mcp.disabled ? " — all turned off by --no-client-tools." : "",
  );
  const problems = (mcp.diagnostics ?? []).length
    ? el("ul", { className: "tool-diagnostics warning" }, ...mcp.diagnostics.map((d) => el("li", {}, d)))
    : null;
  const rows = servers.map((s) => {
    const tools = (s.tools ?? []).map((t) => {
      const boxes = presets.map((p) => {
        const box = el("input", { type: "checkbox", checked: (t.enabledFor ?? []).includes(p.id), disabled: mcp.disabled });
        box.dataset.tool = t.name;
        box.dataset.preset = p.id;
        box.addEventListener("change", () => onToggle(p.id, t.name, box.checked, box));
        return el("label", { className: "switch tool-for" }, box, el("span", {}, p.name));
      });
      return el(
        "li",
        { className: "tool", dataset: { toolName: t.name } },
        el("div", {}, el("strong", {}, t.name)),
        el("p", { className: "muted small" }, t.description),
        el("div", { className: "row" }, ...boxes),
      );
    });
    const bad = s.state === "failed" || s.state === "stopped";
    return el(
      "li",
      { className: "tool mcp-server", dataset: { mcpServer: s.name, state: s.state } },
      el("div", {}, el("strong", {}, s.name), el("span", { className: "muted small" }, `  ${s.transport} · ${where(s)} · ${s.timeoutMs} ms`)),
      el("p", { className: bad ? "warning small mcp-state" : "muted small mcp-state" }, stateLine(s)),
      ...(s.diagnostics ?? []).map((m) => el("p", { className: "warning small" }, m)),
      tools.length ? el("ul", { className: "tool-list mcp-tools" }, ...tools) : null,
    );
  });
  const list = rows.length
    ? el("ul", { className: "tool-list" }, ...rows)
    : el("p", { className: "muted small" }, "No MCP servers are configured. See docs/mcp.md.");
  return el("div", { className: "mcp-servers" }, el("h3", {}, "MCP servers"), head, problems, list);
}

/** Whether the report shows a server still starting (the panel then asks again shortly). */
export function anyStarting(report) {
  return (report.mcp?.servers ?? []).some((s) => s.state === "starting");
}
