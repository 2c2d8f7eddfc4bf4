-- Drives the SAGE language server from a real Neovim (0.7+, headless), the way a user would:
-- open a kernel, attach the client, break the kernel in the buffer, :write, wait for the
-- server's diagnostic, repair it, :write, wait for the fault to clear, ask for code lenses.
--
-- Run: SAGE_NVIM_E2E=/path/config.json nvim --headless -u NONE -i NONE -n -c 'luafile save_cycle.lua'
-- The config (JSON) names the server command, the kernel, the line text to delete, the code
-- to wait for, the result file and the time limit of each wait. Everything observed is written
-- to the result file as JSON; the Python test asserts on it.

local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local lsp = dofile(here .. "common.lua")
local result = lsp.result

lsp.main(function(cfg)
  vim.o.hidden = true
  local client_id = lsp.start()
  local bufnr = lsp.open(cfg.kernel, client_id)

  -- The fault: delete the configured line (the test deletes a FreeTensor, so a later
  -- AllocTensor finds its queue full).
  local lnum, removed = lsp.find_line(bufnr, cfg.remove)
  vim.api.nvim_buf_set_lines(bufnr, lnum, lnum + 1, false, {})
  vim.cmd("write")
  lsp.step("fault_saved")
  local seen = lsp.wait_for(cfg.timeout_ms, function()
    return lsp.has_code(bufnr, cfg.code)
  end)
  result.fault = { diagnostics = lsp.diagnostics(bufnr), seen = seen }
  if not seen then
    error(string.format("no %q diagnostic within %d ms of the save", cfg.code, cfg.timeout_ms))
  end
  lsp.step("fault_shown")

  -- The repair: put the line back and save; the fault must go and the summary lens appear.
  vim.api.nvim_buf_set_lines(bufnr, lnum, lnum, false, { removed })
  vim.cmd("write")
  lsp.step("fix_saved")
  local cleared = lsp.wait_for(cfg.timeout_ms, function()
    return not lsp.has_code(bufnr, cfg.code)
  end)
  result.fixed = { diagnostics = lsp.diagnostics(bufnr), cleared = cleared }
  if not cleared then
    error(string.format("the %q diagnostic was still shown %d ms after the repair", cfg.code, cfg.timeout_ms))
  end
  lsp.step("fault_cleared")
  -- The lens reflects the newest report, which is published with the diagnostics above;
  -- poll briefly in case the client answers before the server stored it.
  result.fixed.lenses = lsp.wait_for_lens(bufnr, "SAGE: correct", 10000)
  lsp.step("lenses")

  lsp.stop(client_id)
end)
