"""ISO 4217 currency codes, to reject a price whose currency is mistyped or invented.

The list is the active codes of ISO 4217 (amendments up to 2024: ZWG, XCG, SLE included); funds
and precious-metal codes are left out because no provider prices compute in them.
"""

from __future__ import annotations

import re

ISO_4217_CODES = frozenset(
    """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP
    BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP
    GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR
    KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK
    MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR
    SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS
    UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG
    """.split()
)

_CODE_SHAPE = re.compile(r"[A-Z]{3}")


def currency_problem(code: str, accepted: frozenset[str] | None = None) -> str | None:
    """Why `code` cannot price anything, or None when it can.

    `accepted` narrows ISO 4217 to the currencies the caller can convert (those with an FX rate).
    """
    if not _CODE_SHAPE.fullmatch(code):
        return f"currency {code!r} is not an ISO 4217 code (three capital letters, e.g. USD, CNY)"
    if code not in ISO_4217_CODES:
        return f"unknown currency {code!r}: not an ISO 4217 code"
    if accepted is not None and code not in accepted:
        return f"unknown currency {code!r}: no FX rate for it (accepted: {', '.join(sorted(accepted))})"
    return None
