"""rulegen.gitops"""
