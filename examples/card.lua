-- Functions examples/card.yaml calls: what YAML cannot compute.

-- The Luhn check digit of a string of digits (ISO/IEC 7812): the last digit of every payment
-- card number, which a checkout form validates before anything else.
local function luhn_sum(digits, double_first)
  local sum, double = 0, double_first
  for i = #digits, 1, -1 do
    local d = digits:byte(i) - 48
    if double then
      d = d * 2
      if d > 9 then d = d - 9 end
    end
    sum = sum + d
    double = not double
  end
  return sum
end

-- `{{ lua.with_check_digit('400000123456789') }}`: the digits with their check digit appended.
function with_check_digit(digits)
  assert(digits:match("^%d+$"), "with_check_digit: not digits: " .. digits)
  return digits .. tostring((10 - luhn_sum(digits, true) % 10) % 10)
end

-- `check: { lua: card_accepted }`: the response must carry the card number that was sent, and
-- that number must pass the Luhn check. True, or a message saying what is wrong.
function card_accepted(status, headers, body)
  if status ~= 200 then return "status " .. status end
  local card = body:match('"card":"(%d+)"')
  if not card then return "no card number in the response" end
  if luhn_sum(card, false) % 10 ~= 0 then return "card " .. card .. " fails the Luhn check" end
  return true
end
