"""rulegen.importer"""
