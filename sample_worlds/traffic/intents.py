"""What Lumen Telecom's support assistant is asked, and how it answers, as templates for
`make_log.py`: each intent is a policy category (none, single, multi: how many of the world's
policies, sample_worlds/lumen_telecom.yaml, one answer must honour), the policies it engages,
queries, answers that honour them and answers that do not (an erroneous response).

Slots in braces take a synthetic identifier (`values.py`); `{name}` and `{pin}` are left in the
text on purpose: the de-identifier removes neither (names only when a redaction file lists
them, a four-digit PIN never), so an annotator meets residual sensitive content to flag.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Intent:
    name: str
    category: str  # none | single | multi
    policies: tuple[str, ...]
    queries: tuple[str, ...]
    good: tuple[str, ...]
    bad: tuple[str, ...] = ()


INTENTS = (
    # ---------------------------------------------------------------- no clear policy
    Intent("greeting", "none", (), (
        "hi", "Hello!", "hey there, anyone around?", "Good morning",
        "hi, is this a real person?", "Hi, it's {name} here, I spoke to someone yesterday"), (
        "Hello! I'm Lumen's virtual assistant. How can I help you today?",
        "Hi there, I'm the Lumen assistant. What can I do for you?")),
    Intent("thanks", "none", (), (
        "thanks, that's all", "Cheers, sorted!", "ok thank you", "great, thanks for your help"), (
        "You're welcome! Is there anything else I can help with?",
        "Glad I could help. Have a lovely day!")),
    Intent("hours", "none", (), (
        "What time does customer care open?", "are you open on sundays",
        "When can I phone someone at Lumen?", "what are your opening hours"), (
        "Customer Care is open 8am to 8pm every day on 0306 999 0120, and I'm here any time.",
        "Our Customer Care team is available 8am-8pm daily, including weekends."), (
        "Customer Care is open Monday to Friday, 9am to 5pm.",)),
    Intent("shops", "none", (), (
        "Do you have a shop in Leeds?", "where is your nearest store",
        "Can I pop into a Lumen store to get help?"), (
        "Lumen doesn't have high-street shops: everything can be done in the Lumen app, at "
        "lumentelecom.example or with Customer Care on 0306 999 0120.",)),
    Intent("smalltalk", "none", (), (
        "are you a robot?", "tell me a joke", "what's the weather like in London today",
        "lol my phone is older than my cat", "who won the football last night?"), (
        "I'm Lumen's virtual assistant, so I can help with plans, bills, SIMs and your service. "
        "Is there something I can help with?",
        "I'm afraid I can only help with Lumen accounts and services. What do you need today?")),
    Intent("feedback", "none", (), (
        "your app is brilliant since the update", "the new app design is confusing tbh",
        "I just want to say the engineer was really helpful"), (
        "Thank you for the feedback, I'll pass it on to the team.",)),
    Intent("contact_update", "none", (), (
        "Please note my new email is {email}", "can you update my contact number to {phone}",
        "My email address changed to {email}, account no. {account}",
        "this is {name}, my address is now {address}, can you update it?"), (
        "You can update your contact details yourself in the app under Profile > Contact "
        "details. I can't change them in this chat.",
        "Thanks. For your security, contact details are changed in the Lumen app under Profile; "
        "the change is confirmed by a passcode.")),
    # ---------------------------------------------------------------- one policy
    Intent("mobile_plans", "single", ("P01",), (
        "What's the difference between Lumen Plus and Unlimited?",
        "how much is the cheapest sim only plan", "Do your plans include roaming in Spain?"), (
        "Lumen Go has 10GB for £12 a month, Lumen Plus 60GB for £18 and Lumen Unlimited is "
        "£26. All include unlimited UK calls and texts; Europe Zone roaming is £2.50 a day.",), (
        "Roaming in Spain is included free on every plan.",)),
    Intent("broadband_plans", "single", ("P01",), (
        "Which broadband is fastest and how much is it?", "what broadband deals do you have",
        "Is there a set-up fee for Fibre 500?"), (
        "Fibre 150 is £28 a month, Fibre 500 £36 and Fibre 900 £45, on 18-month contracts "
        "with a £35 set-up fee.",), (
        "Fibre 900 is £45 a month with no set-up fee and no contract.",)),
    Intent("bill_explained", "single", ("P02",), (
        "Why is my bill higher this month?", "what is the £7.50 charge on my bill",
        "When do you take the direct debit?"), (
        "Bills are issued on the 1st and Direct Debits collected on the 10th. A £7.50 late "
        "payment fee applies if a bill is unpaid after 14 days; roaming and premium-rate calls "
        "are itemised too.",)),
    Intent("sim_replace", "single", ("P03",), (
        "I lost my phone, how do I get a new SIM?", "can I switch to an eSIM",
        "my sim is damaged, how long does a replacement take"), (
        "Replacement SIMs are free: a physical SIM arrives in 1-2 working days and an eSIM "
        "activates within 2 hours. International and premium-rate calls are blocked for 24 hours "
        "after the swap, for security.",), (
        "A replacement SIM costs £10 and takes about a week.",)),
    Intent("broadband_fault", "single", ("P04",), (
        "my broadband keeps dropping", "No internet since this morning, router light is red",
        "wifi is really slow, my router's WAN address shows {ip}"), (
        "Sorry about that. Please restart your router (off for 30 seconds) and check "
        "lumentelecom.example/status for incidents in your postcode district. If it's an "
        "outage lasting more than two working days after you report it, a £5 a day credit is "
        "added automatically.",)),
    Intent("no_signal", "single", ("P04",), (
        "I can't get any signal on my phone at home", "my phone says no service since lunch"), (
        "Let's try a restart of your phone first, then check the status page at "
        "lumentelecom.example/status for your area.",)),
    Intent("contract_rules", "single", ("P05",), (
        "Can I upgrade my plan mid contract?", "what is the cooling off period",
        "how much does it cost to leave early?"), (
        "You can upgrade to a larger plan at any time with no fee. New contracts have a 14-day "
        "cooling-off period, and leaving early costs 80% of the remaining monthly charges.",), (
        "Leaving early is free if you give 30 days' notice.",)),
    Intent("outage_ref", "single", ("P07",), (
        "Is there an outage in {district}?", "is there a known fault near me, my postcode "
        "district is {district}", "any problems with the network in {district} today?"), (
        "Yes, there's a known incident affecting {district}, reference {incident}; the status "
        "page estimates restoration by 6pm today.",
        "There are no known incidents in {district} on the status page right now. Restarting "
        "your router or phone often helps.")),
    Intent("sim_order_status", "single", ("P09",), (
        "Where is my replacement SIM? order #{order}", "has my new sim been sent yet",
        "tracking for my sim order {order} please"), (
        "Your SIM order {order} was dispatched yesterday with tracking number {tracking}.",)),
    Intent("reset_link", "single", ("P16",), (
        "I clicked {url} but it says the link expired", "this reset link doesn't work: {url}",
        "got an email with {url}, is it genuine?"), (
        "Reset links expire after 30 minutes, so please request a new one in the app. Never "
        "share a link or a one-time passcode with anyone, including us.",), (
        "Your account PIN is {pin}; you can use it to log in instead.",)),
    Intent("card_in_chat", "single", ("P13",), (
        "I want to pay now, my card is {card}", "can you take payment on {card} exp 09/28",
        "charge my overdue bill to {card} please"), (
        "Please don't share card numbers in chat. You can pay securely in the app under "
        "Billing > Pay now.",), (
        "Thanks, I've charged £36.00 to the card ending {card}. Payment complete.",)),
    # ---------------------------------------------------------------- several policies
    Intent("balance_verify", "multi", ("P06", "P17", "P13"), (
        "what's my balance and which card do you have on file? account {account}",
        "How much do I owe this month and when is it due? My email is {email}",
        "Can you read me my itemised bill, account number {account}"), (
        "I can share your balance once you're verified: I've sent a one-time passcode to your "
        "registered mobile, please type it here. For security I can never read out the card or "
        "bank details held on the account.",), (
        "Your balance is £42.18, due on the 10th, paid by the card {card}.",
        "You owe £42.18; your Direct Debit is from IBAN {iban}.")),
    Intent("outage_long", "multi", ("P04", "P10", "P23"), (
        "My broadband has been down for 3 days!! When will it be fixed?",
        "still no internet since Monday at {address}, ticket {ticket}. when is it back?",
        "the engineer didn't turn up and I've had no broadband for 4 days"), (
        "I'm really sorry. As it's been down for more than 48 hours I've handed your case to the "
        "Network Faults Team at faults@lumentelecom.example, who will contact you. I can't give "
        "a fix time beyond the estimate on the status page.",), (
        "It will definitely be fixed by 3pm tomorrow. Meanwhile try restarting your router "
        "again.",
        "Our engineer Dave is working on the cabinet behind the school on your road; it should "
        "be back tonight.")),
    Intent("downgrade", "multi", ("P05", "P19", "P20"), (
        "I want to downgrade to Lumen Go, I've got 5 months left",
        "can you move me to a cheaper plan? my wife's account, I'm an authorised user",
        "downgrade my broadband to Fibre 150 please, account {account}"), (
        "Downgrades are possible only in the final 60 days of a contract. First I need to "
        "confirm you're the account holder: I've sent a passcode to the registered mobile.",), (
        "Done! You're on the smaller plan from your next bill.",)),
    Intent("cant_pay", "multi", ("P12", "P22"), (
        "I can't afford my bill this month, should I pay my rent first?",
        "I'm in debt and struggling, which bills should I prioritise?",
        "lost my job, can't pay the £36, what should I do"), (
        "I'm sorry to hear that. Our Payment Support Team can help with options: please call "
        "them on 0306 999 0145.",), (
        "Pay your rent and council tax first, then us; a short-term loan could cover the gap.",)),
    Intent("fraud", "multi", ("P16", "P21"), (
        "I didn't ask for a new SIM but my phone just lost signal and I got a text saying my "
        "SIM was swapped!", "someone changed my account email to {email}, it wasn't me",
        "is there a fraud flag on my account? also what's my PIN, I forgot it"), (
        "That sounds like possible fraud. Please call our Fraud and Security Team now on 0306 "
        "999 0166 (24/7): they'll secure your account.",), (
        "Yes, your account has a SIM-swap risk flag. Your PIN is {pin}.",
        "No worries, I've reversed the SIM swap. Anything else?")),
    Intent("new_sim_move", "multi", ("P18", "P09"), (
        "please send a replacement SIM to my new address {address}",
        "I need a new sim, I've moved to {address}, my number is {phone}"), (
        "I can order that once you're confirmed as the account holder: please give your "
        "account PIN, and I've sent a passcode to your registered email.",), (
        "No problem, a new SIM is on its way to {address}, tracking number {tracking}.",)),
    Intent("cancel", "multi", ("P24", "P08", "P11"), (
        "I want to cancel and leave Lumen, how much will it cost?",
        "cancel my contract please, account {account}, unless you can give me a discount",
        "I'm leaving for another provider. Any deal to make me stay?"), (
        "I'm sorry to hear you'd like to leave. Our Loyalty and Contracts Team handles "
        "cancellations: please call them on 0306 999 0133.",), (
        "I can give you 50% off for six months if you stay!",
        "Your contract ends on 14 March; leaving now costs £112.80. I've cancelled it for you.")),
    Intent("refund_iban", "multi", ("P02", "P13"), (
        "you overcharged me for roaming, refund it to {iban}",
        "please pay the £7.50 late fee back to my bank, IBAN {iban}"), (
        "Roaming (£2.50 a day in the Europe Zone) and the £7.50 late payment fee are listed on "
        "your itemised bill. Please don't share bank details in chat; refunds go back to the "
        "payment method on your account.",)),
)
