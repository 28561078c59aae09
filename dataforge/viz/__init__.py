"""Pictures and tables for people: contact sheets, histograms, summary tables."""
