// The frame of every HTML page (html_parts.h): escaping, numbers with units,
// the inline style and script, the run information, the inline timeline and
// the --explain table. Nothing here refers to anything outside the page.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "planner/views/html_report.h"
#include "planner/views/timeline.h"
#include "views/html_parts.h"

namespace planner {

namespace {

// Colour-blind-safe throughout (Okabe & Ito 2008; Tol 2021, "muted"); no web
// fonts, the reader's system fonts.
constexpr const char* kStyle = R"CSS(
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1a1a1a;background:#fff}
main{max-width:1240px;margin:0 auto;padding:16px 20px 40px}
h1{font-size:22px;margin:0 0 6px}
h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #d0d0d0;padding-bottom:4px}
p{margin:6px 0}
.muted{color:#5a5a5a}
.bad{color:#b00020;font-weight:600}
.ok{color:#006b3c;font-weight:600}
dl.run{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0}
dl.run dt{font-weight:600}
dl.run dd{margin:0}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f6f6f6;padding:8px;overflow-x:auto}
.wide{overflow-x:auto}
dd code{white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:6px 0}
th,td{padding:3px 8px;border-bottom:1px solid #e6e6e6;text-align:right;white-space:nowrap}
th{background:#f2f2f2}
.l{text-align:left}
td.wrap{white-space:normal}
tr.detail>td{padding:0 8px 6px 24px;text-align:left;border-bottom:1px solid #c8c8c8}
summary{cursor:pointer;color:#0b57d0;font-size:13px}
svg{max-width:100%;height:auto;display:block}
figure{margin:8px 0 14px}
figcaption{font-size:13px;color:#5a5a5a;margin-bottom:4px}
ul.legend{display:flex;flex-wrap:wrap;gap:2px 14px;font-size:12px;margin:4px 0;padding:0;list-style:none}
ul.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px;border:1px solid rgba(0,0,0,.3)}
#tip{position:fixed;pointer-events:none;background:#fff;border:1px solid #888;padding:4px 6px;font-size:12px;
box-shadow:0 1px 4px rgba(0,0,0,.25);display:none;white-space:pre;z-index:10}
@page{size:A4 landscape;margin:12mm}
@media print{body{font-size:11px}main{max-width:none;padding:0}#tip{display:none!important}
figure,tr,table.explain tr{break-inside:avoid}h2{break-after:avoid}summary{color:inherit}}
)CSS";

// Errors show on the page (and make the browser test fail); the scatter's
// tooltip finds the nearest mark; printing opens every <details>.
constexpr const char* kScript = R"JS(
(function(){
function fail(m){var p=document.getElementById('js-error');
if(!p){p=document.createElement('p');p.id='js-error';p.className='bad';document.querySelector('main').prepend(p);}
p.textContent='script error: '+m;}
window.addEventListener('error',function(e){fail(e.message);});
window.addEventListener('beforeprint',function(){document.querySelectorAll('details').forEach(function(d){d.open=true;});});
var tip=document.getElementById('tip');
function show(e,t){tip.textContent=t;tip.style.display='block';var x=e.clientX+14,y=e.clientY+14;
if(x+tip.offsetWidth>innerWidth)x=e.clientX-tip.offsetWidth-8;if(y+tip.offsetHeight>innerHeight)y=e.clientY-tip.offsetHeight-8;
tip.style.left=x+'px';tip.style.top=y+'px';}
function hide(){tip.style.display='none';}
function num(x){return Math.round(x).toLocaleString('en-US');}
var svg=document.getElementById('scatter'),data=document.getElementById('scatter-data');
if(svg&&data){var d=JSON.parse(data.textContent),m=d.marks,S=d.stride;
svg.addEventListener('mousemove',function(e){var p=svg.createSVGPoint();p.x=e.clientX;p.y=e.clientY;
var q=p.matrixTransform(svg.getScreenCTM().inverse()),b=-1,bd=81;
for(var i=0;i<m.length;i+=S){var dx=m[i]-q.x,dy=m[i+1]-q.y,dd=dx*dx+dy*dy;if(dd<bd){bd=dd;b=i;}}
if(b<0){hide();return;}var a=m.slice(b,b+S),step=a[11]/1e4;
var t='TP'+a[3]+' CP'+a[4]+' PP'+a[5]+' DP'+a[6]+', mbs '+a[7]+', vpp '+a[8]+', recompute '+d.recompute[a[9]]+
', ZeRO '+d.zero[a[2]]+', SP '+(a[10]?'on':'off')+'\nstep '+step.toFixed(3)+' s, '+num(d.tokens_per_step/step)+
' tokens/s\nmemory '+(a[12]/1024).toFixed(2)+' GiB per GPU';
if(a[13]>1)t+='\n'+a[13]+' layouts on this spot; the fastest shown';show(e,t);});
svg.addEventListener('mouseleave',hide);}
document.body.setAttribute('data-script','ok');
})();
)JS";

}  // namespace

namespace html {

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
    }
  }
  return out;
}

std::string seconds(double s) {
  if (std::abs(s) >= 1.0) return fmt::format("{:.3f} s", s);
  if (std::abs(s) >= 1e-3) return fmt::format("{:.1f} ms", s * 1e3);
  return fmt::format("{:.1f} µs", s * 1e6);
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / double(1ull << 30)); }

std::string count(double n) {
  const std::string digits = fmt::format("{:.0f}", std::abs(n));
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 && digits != "0" ? "-" : "") + out;
}

std::string page_begin(std::string_view title, const RunContext& ctx, const HtmlPageInfo& info) {
  const TrainingSpec& t = ctx.training;
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n<h1>{}</h1>\n",
      escape(title), kStyle, escape(title));
  out += "<dl class=\"run\" id=\"run-info\">\n";
  auto row = [&out](const char* k, const std::string& v) { out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", k, v); };
  row("command", "<code>" + escape(info.command) + "</code>");
  row("model", escape(ctx.model.name) + (ctx.model.display_name.empty() || ctx.model.display_name == ctx.model.name
                                             ? std::string()
                                             : " (" + escape(ctx.model.display_name) + ")"));
  row("hardware", escape(ctx.hardware.name) + (ctx.hardware.display_name.empty()
                                                   ? std::string()
                                                   : " (" + escape(ctx.hardware.display_name) + ")"));
  row("run", fmt::format("{} GPUs, sequence {} tokens, global batch {} sequences ({} tokens), {}, {} attention",
                         count(double(t.num_gpus)), count(double(t.seq_len)), count(double(t.global_batch_sequences)),
                         count(double(t.global_batch_sequences * t.seq_len)), to_string(t.dtype),
                         to_string(t.attention)));
  row("planner", "version " + escape(info.version));
  out += "</dl>\n";
  return out;
}

std::string page_end() { return fmt::format("</main>\n<div id=\"tip\"></div>\n<script>{}</script>\n</body>\n</html>\n", kScript); }

std::string timeline(const SimResult& r, const Evaluation& ev, const PipelineProblem& pr, const RunContext& ctx,
                     const HtmlPageInfo& info) {
  std::string svg = render_svg_timeline(r, timeline_labels(ctx, ev, pr, info.command));
  if (svg.rfind("<?xml", 0) == 0) svg.erase(0, svg.find('\n') + 1);  // no XML declaration inside HTML
  return fmt::format(
      "<figure id=\"timeline\">\n<figcaption>One step of one pipeline replica, simulated event by event with the "
      "{} schedule ({} events); hover a box for its op and times.</figcaption>\n{}</figure>\n",
      to_string(pr.schedule), count(double(r.events.size())), svg);
}

std::string explain_table(const Explain& ex) {
  std::string out =
      "<table class=\"explain\" id=\"explain\">\n<tr><th class=\"l\">quantity</th><th class=\"l\">formula</th>"
      "<th class=\"l\">inputs</th><th>output</th><th class=\"l\">source</th></tr>\n";
  for (const ExplainStep& s : ex.steps()) {
    std::string in;
    for (const auto& [k, v] : s.inputs) in += fmt::format("{}{} = {:.6g}", in.empty() ? "" : ", ", k, v);
    out += fmt::format(
        "<tr><td class=\"l wrap\">{}</td><td class=\"l wrap\"><code>{}</code></td><td class=\"l wrap\">{}</td>"
        "<td>{:.6g} {}</td><td class=\"l wrap\">{}</td></tr>\n",
        escape(s.name), escape(s.formula), escape(in), s.output, escape(s.unit), escape(s.citation));
  }
  return out + "</table>\n";
}

}  // namespace html

std::string page_command_line(std::string_view command) {
  std::string out;
  std::size_t i = 0;
  while (i < command.size()) {
    const std::size_t end = std::min(command.find(' ', i), command.size());
    std::string arg(command.substr(i, end - i));
    // The path part starts after a leading quote or a --flag= prefix.
    std::size_t start = arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos ? arg.find('=') + 1 : 0;
    if (start < arg.size() && arg[start] == '\'') ++start;
    if (start < arg.size() && arg[start] == '/') {
      const std::size_t slash = arg.rfind('/');
      arg.erase(start, slash + 1 - start);
    }
    out += (out.empty() && i == 0 ? "" : " ") + arg;
    i = end + 1;
  }
  return out;
}

}  // namespace planner
